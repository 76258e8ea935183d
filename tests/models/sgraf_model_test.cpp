// SgrafModel (docs/backbones.md §4.9): the exact state-dict names and shapes of the official SGR and SAF models,
// the parameter counts at full size (built only to count), the forward against its parts, the SGRAF
// average, and a float64 gradcheck of a whole tiny model (encoders included).
#include "models/sgraf_model.h"

#include <iostream>
#include <map>

#include "model_test_util.h"

namespace rematch::models {
namespace {

SgrafConfig full_size(SimilarityModule module, int64_t vocab) {
  SgrafConfig c;
  c.module = module;
  c.vocab_size = vocab;
  return c;
}

TEST(SgrafModel, StateDictNamesAndShapesAreTheOfficialOnes) {
  SgrafConfig c;
  c.vocab_size = 11;
  c.img_dim = 7;
  c.word_dim = 5;
  c.embed_size = 6;
  c.sim_dim = 4;
  c.num_regions = 3;
  const std::vector<std::pair<std::string, Shape>> common = {
      {"img_enc.fc.weight", {6, 7}},
      {"img_enc.fc.bias", {6}},
      {"txt_enc.embed.weight", {11, 5}},
      {"txt_enc.cap_rnn.weight_ih_l0", {18, 5}},
      {"txt_enc.cap_rnn.weight_hh_l0", {18, 6}},
      {"txt_enc.cap_rnn.bias_ih_l0", {18}},
      {"txt_enc.cap_rnn.bias_hh_l0", {18}},
      {"txt_enc.cap_rnn.weight_ih_l0_reverse", {18, 5}},
      {"txt_enc.cap_rnn.weight_hh_l0_reverse", {18, 6}},
      {"txt_enc.cap_rnn.bias_ih_l0_reverse", {18}},
      {"txt_enc.cap_rnn.bias_hh_l0_reverse", {18}},
      {"sim_enc.v_global_w.embedding_local.0.weight", {6, 6}},
      {"sim_enc.v_global_w.embedding_local.0.bias", {6}},
      {"sim_enc.v_global_w.embedding_local.1.weight", {3}},
      {"sim_enc.v_global_w.embedding_local.1.bias", {3}},
      {"sim_enc.v_global_w.embedding_local.1.running_mean", {3}},
      {"sim_enc.v_global_w.embedding_local.1.running_var", {3}},
      {"sim_enc.v_global_w.embedding_local.1.num_batches_tracked", {}},
      {"sim_enc.v_global_w.embedding_global.0.weight", {6, 6}},
      {"sim_enc.v_global_w.embedding_global.0.bias", {6}},
      {"sim_enc.v_global_w.embedding_global.1.weight", {6}},
      {"sim_enc.v_global_w.embedding_global.1.bias", {6}},
      {"sim_enc.v_global_w.embedding_global.1.running_mean", {6}},
      {"sim_enc.v_global_w.embedding_global.1.running_var", {6}},
      {"sim_enc.v_global_w.embedding_global.1.num_batches_tracked", {}},
      {"sim_enc.v_global_w.embedding_common.0.weight", {1, 6}},
      {"sim_enc.v_global_w.embedding_common.0.bias", {1}},
      {"sim_enc.t_global_w.embedding_local.0.weight", {6, 6}},
      {"sim_enc.t_global_w.embedding_local.0.bias", {6}},
      {"sim_enc.t_global_w.embedding_global.0.weight", {6, 6}},
      {"sim_enc.t_global_w.embedding_global.0.bias", {6}},
      {"sim_enc.t_global_w.embedding_common.0.weight", {1, 6}},
      {"sim_enc.t_global_w.embedding_common.0.bias", {1}},
      {"sim_enc.sim_tranloc_w.weight", {4, 6}},
      {"sim_enc.sim_tranloc_w.bias", {4}},
      {"sim_enc.sim_tranglo_w.weight", {4, 6}},
      {"sim_enc.sim_tranglo_w.bias", {4}},
      {"sim_enc.sim_eval_w.weight", {1, 4}},
      {"sim_enc.sim_eval_w.bias", {1}},
  };
  std::vector<std::pair<std::string, Shape>> sgr = common, saf = common;
  for (int step = 0; step < 3; ++step)
    for (const char* layer : {"graph_query_w", "graph_key_w", "sim_graph_w"}) {
      const std::string p = "sim_enc.SGR_module." + std::to_string(step) + "." + layer;
      sgr.push_back({p + ".weight", {4, 4}});
      sgr.push_back({p + ".bias", {4}});
    }
  for (const auto& e : std::vector<std::pair<std::string, Shape>>{{"sim_enc.SAF_module.attn_sim_w.weight", {1, 4}},
                                                                  {"sim_enc.SAF_module.attn_sim_w.bias", {1}},
                                                                  {"sim_enc.SAF_module.bn.weight", {1}},
                                                                  {"sim_enc.SAF_module.bn.bias", {1}},
                                                                  {"sim_enc.SAF_module.bn.running_mean", {1}},
                                                                  {"sim_enc.SAF_module.bn.running_var", {1}},
                                                                  {"sim_enc.SAF_module.bn.num_batches_tracked", {}}})
    saf.push_back(e);
  for (SimilarityModule module : {SimilarityModule::SGR, SimilarityModule::SAF}) {
    c.module = module;
    SgrafModel model(c);
    std::vector<std::pair<std::string, Shape>> got;
    for (const auto& [n, t] : model.state_dict()) got.push_back({n, t.sizes()});
    EXPECT_EQ(got, module == SimilarityModule::SGR ? sgr : saf) << module_name(module);
  }
}

// Parameters per block of §4.9, by state-dict prefix.
std::map<std::string, int64_t> block_counts(const SgrafModel& model) {
  const std::vector<std::pair<std::string, std::string>> blocks = {
      {"img_enc.", "image enc"},           {"txt_enc.", "text enc"},
      {"sim_enc.v_global_w.", "VisualSA"}, {"sim_enc.t_global_w.", "TextSA"},
      {"sim_enc.sim_tran", "sim vectors"}, {"sim_enc.sim_eval_w.", "head"},
      {"sim_enc.SGR_module.", "SGR"},      {"sim_enc.SAF_module.", "SAF"}};
  std::map<std::string, int64_t> out;
  for (const auto& [n, t] : model.named_parameters())
    for (const auto& [prefix, block] : blocks)
      if (n.compare(0, prefix.size(), prefix) == 0) out[block] += t.numel();
  return out;
}

TEST(SgrafModel, ParameterCountsAtFullSize) {
  const SgrafModel sgr(full_size(SimilarityModule::SGR, 8481)), saf(full_size(SimilarityModule::SAF, 8481));
  std::cout << "[ counts   ] SGR (F30K, V = 8481): " << sgr.parameter_count()
            << ", SAF (F30K, V = 8481): " << saf.parameter_count() << "\n";
  EXPECT_EQ(sgr.parameter_count(), 18109175);
  EXPECT_EQ(saf.parameter_count(), 17517306);
  const std::map<std::string, int64_t> want = {{"image enc", 2098176},  {"text enc", 300 * 8481 + 8146944},
                                               {"VisualSA", 2102345},   {"TextSA", 2100225},
                                               {"sim vectors", 524800}, {"head", 257},
                                               {"SGR", 592128}};
  EXPECT_EQ(block_counts(sgr), want);
  EXPECT_EQ(block_counts(saf).at("SAF"), 259);
  // COCO (V = 11,353) and CC152K (V = 12,072) change only the embedding rows.
  EXPECT_EQ(sgr.parameter_count() + 300 * (11353 - 8481), 18970775);
  EXPECT_EQ(SgrafModel(full_size(SimilarityModule::SAF, 12072)).parameter_count(), 18594606);
}

TEST(SgrafModel, ForwardIsTheEncodersThenTheSimilarity) {
  SgrafConfig c;
  c.vocab_size = 12;
  c.img_dim = 5;
  c.word_dim = 3;
  c.embed_size = 4;
  c.sim_dim = 3;
  c.num_regions = 2;
  SgrafModel model(c, DType::Float64);
  model.eval();
  const Tensor regions = test::random_tensor({3, 2, 5}, DType::Float64, 1, 0, 1);
  const Tensor ids = from_vector(std::vector<int64_t>{1, 5, 6, 2, 1, 2, 0, 0}, {2, 4});
  const Tensor lengths = test::lengths_tensor({4, 2});
  const Tensor s = model(regions, ids, lengths);
  ASSERT_EQ(s.sizes(), (Shape{3, 2}));
  const Tensor want = model.sim_enc()(model.img_enc()(regions), model.txt_enc()(ids, lengths), lengths);
  EXPECT_TRUE(test::all_close(s, want, 0, 0));
  for (double v : s.to_vector<double>()) EXPECT_TRUE(v > 0 && v < 1);  // sigmoid scores
}

TEST(SgrafModel, SgrafAveragesScoreMatrices) {
  const Tensor a = from_vector(std::vector<double>{0.2, 0.4}), b = from_vector(std::vector<double>{0.6, 0.0});
  EXPECT_TRUE(test::values_equal(average_scores({a, b}), {0.4, 0.2}, 1e-15));
  EXPECT_THROWS_WITH(average_scores({a, zeros({3}, DType::Float64)}), "average_scores", "[3]");
  EXPECT_THROWS_WITH(average_scores({}), "no score matrices");
}

TEST(SgrafModel, GradcheckWholeModel) {
  SgrafConfig c;
  c.vocab_size = 6;
  c.img_dim = 3;
  c.word_dim = 2;
  c.embed_size = 2;
  c.sim_dim = 2;
  c.num_regions = 2;
  c.sgr_step = 2;
  c.dropout = 0.0;
  for (SimilarityModule module : {SimilarityModule::SGR, SimilarityModule::SAF}) {
    c.module = module;
    SgrafModel model(c, DType::Float64);
    model.train();
    const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 2, 1, 2, 0}, {2, 3});
    const Tensor lengths = test::lengths_tensor({3, 2});
    auto f = [&](const TensorList& t) { return model(t[0], ids, lengths); };
    EXPECT_GRADCHECK(test::over_parameters(model, f, 1),
                     test::with_parameters(model, {test::random_tensor({2, 2, 3}, DType::Float64, 2, 0, 1)}))
        << module_name(module);
  }
}

}  // namespace
}  // namespace rematch::models
