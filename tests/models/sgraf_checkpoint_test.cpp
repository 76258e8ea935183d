// Reading SGR/SAF models from files: an official checkpoint converted by tools/convert_pth.py (written by
// tests/reference/sgraf_reference.py from the golden model) loads unchanged and scores like the reference;
// a rematch training checkpoint round-trips with its model_config; malformed or unsupported files are
// errors that name the file and the problem.
#include "models/sgraf_checkpoint.h"

#include <unistd.h>

#include <filesystem>

#include "model_test_util.h"

namespace rematch::models {
namespace {

const std::string kSgraf = std::string(REMATCH_FIXTURES) + "/sgraf/";

class SgrafCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("rematch_sgraf_ckpt_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

SgrafConfig small(SimilarityModule module) {
  SgrafConfig c;
  c.module = module;
  c.vocab_size = 9;
  c.img_dim = 5;
  c.word_dim = 3;
  c.embed_size = 4;
  c.sim_dim = 3;
  c.num_regions = 2;
  c.sgr_step = 2;
  return c;
}

TEST_F(SgrafCheckpoint, ConvertedOfficialCheckpointsLoadAndScoreLikeTheReference) {
  for (const std::string name : {"sgr", "saf"}) {
    const std::string file = kSgraf + name + "_converted.safetensors";
    const SgrafFile info = read_sgraf_file(file);
    EXPECT_EQ(info.kind, SgrafFileKind::ConvertedOfficial);
    EXPECT_EQ(info.config.module, name == "sgr" ? SimilarityModule::SGR : SimilarityModule::SAF);
    EXPECT_EQ(info.config.vocab_size, 30);
    EXPECT_EQ(info.config.img_dim, 12);
    EXPECT_EQ(info.config.word_dim, 10);
    EXPECT_EQ(info.config.embed_size, 16);
    EXPECT_EQ(info.config.sim_dim, 8);
    EXPECT_EQ(info.config.num_regions, 6);
    EXPECT_EQ(info.config.sgr_step, 3);
    const auto model = load_sgraf_model(file);
    EXPECT_FALSE(model->is_training());
    const std::string fx = kSgraf + name + "/";
    NoGradGuard no_grad;
    const Tensor s = (*model)(kernels::cast(load_npy(fx + "images.npy"), DType::Float32), load_npy(fx + "captions.npy"),
                              load_npy(fx + "lengths.npy"));
    // The converted weights are the float64 reference's rounded to float32, as official checkpoints are.
    EXPECT_TRUE(test::all_close(s, load_npy(fx + "sims_eval.npy"), 1e-6, 0)) << name;
  }
}

TEST_F(SgrafCheckpoint, RematchCheckpointRoundTrip) {
  for (SimilarityModule module : {SimilarityModule::SGR, SimilarityModule::SAF}) {
    SgrafModel model(small(module));
    nn::Adam adam(model.parameters(), 2e-4);
    nn::save_training_checkpoint(path("m.safetensors"), model, adam, nullptr, sgraf_checkpoint_info(model, 3, 40));
    const SgrafFile info = read_sgraf_file(path("m.safetensors"));
    EXPECT_EQ(info.kind, SgrafFileKind::RematchCheckpoint);
    EXPECT_EQ(to_json(info.config), to_json(model.config()));
    const auto loaded = load_sgraf_model(path("m.safetensors"), DType::Float64);
    const nn::StateDict a = model.state_dict(), b = loaded->state_dict();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].first, b[i].first);
      EXPECT_TRUE(test::all_close(b[i].second, a[i].second, 0, 0)) << a[i].first;
    }
    EXPECT_EQ(nn::read_checkpoint_info(path("m.safetensors")).epoch, 3);
  }
}

TEST_F(SgrafCheckpoint, UnsupportedOrMalformedFilesAreErrors) {
  // The toy converted file of tests/nn (real names, toy sizes, most tensors missing).
  EXPECT_THROWS_WITH(load_sgraf_model(std::string(REMATCH_FIXTURES) + "/checkpoint/fake_sgraf.safetensors"),
                     "fake_sgraf.safetensors", "lacks the tensor sim_enc.sim_tranloc_w.weight");
  // A converted SGR model whose options disagree with it, or ask for what this port does not implement.
  SgrafModel sgr(small(SimilarityModule::SGR));
  auto converted = [&](const std::string& opt) {
    nn::save_safetensors(path("c.safetensors"), sgr.state_dict(), {{"opt", opt}});
    return path("c.safetensors");
  };
  EXPECT_EQ(read_sgraf_file(converted(R"({"module_name": "SGR", "bi_gru": true})")).config.sgr_step, 2);
  EXPECT_THROWS_WITH(read_sgraf_file(converted(R"({"module_name": "SAF"})")), "c.safetensors", "\"SAF\"", "SGR model");
  EXPECT_THROWS_WITH(read_sgraf_file(converted(R"({"bi_gru": false})")), "bi_gru", "not supported");
  EXPECT_THROWS_WITH(read_sgraf_file(converted(R"({"no_imgnorm": true})")), "no_imgnorm", "not supported");
  // Strict loading: a tensor of the wrong shape is named.
  nn::StateDict bad = sgr.state_dict();
  for (auto& [name, t] : bad)
    if (name == "sim_enc.sim_eval_w.weight") t = zeros({2, 3});
  nn::save_safetensors(path("bad.safetensors"), bad, {});
  EXPECT_THROWS_WITH(load_sgraf_model(path("bad.safetensors")), "bad.safetensors", "sim_enc.sim_eval_w.weight",
                     "[2, 3]");
  // Neither kind.
  nn::save_safetensors(path("other.safetensors"), {{"w", zeros({2})}}, {});
  EXPECT_THROWS_WITH(load_sgraf_model(path("other.safetensors")), "other.safetensors", "neither");
  // A rematch checkpoint of another model.
  nn::Linear lin(2, 2);
  nn::Adam adam(lin.parameters());
  nn::CheckpointInfo info;
  info.model_config = R"({"model": "vse", "vocab_size": 5})";
  nn::save_training_checkpoint(path("vse.safetensors"), lin, adam, nullptr, info);
  EXPECT_THROWS_WITH(read_sgraf_file(path("vse.safetensors")), "vse.safetensors", "not an SGRAF");
}

// A 4 kB checkpoint whose model_config says embed_size 30000 had the model allocate 10.8 GB for the GRU before
// its weights were read (libFuzzer's out-of-memory in fuzz/sgraf_checkpoint_fuzz; its input is kept in
// fuzz/regressions/sgraf_checkpoint).
TEST_F(SgrafCheckpoint, AConfigLargerThanTheFileIsAnErrorBeforeTheModelIsBuilt) {
  SgrafModel model(small(SimilarityModule::SGR));
  nn::Adam adam(model.parameters(), 2e-4);
  nn::CheckpointInfo info = sgraf_checkpoint_info(model);
  SgrafConfig huge = small(SimilarityModule::SGR);
  huge.embed_size = 30000;
  info.model_config = to_json(huge);
  nn::save_training_checkpoint(path("huge.safetensors"), model, adam, nullptr, info);
  EXPECT_EQ(read_sgraf_file(path("huge.safetensors")).config.embed_size, 30000);
  EXPECT_THROWS_WITH(load_sgraf_model(path("huge.safetensors")), "huge.safetensors", "embed=30000",
                     "that model has 9.00", "values, but the file holds only");
}

}  // namespace
}  // namespace rematch::models
