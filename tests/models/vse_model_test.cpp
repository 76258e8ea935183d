// RCSL's VSE model (models/vse_*.h): state-dict names, parameter counts and initialisation as the official
// encoders.py; golden fixtures from tests/reference/vse_reference.py (a PyTorch transcription of
// docs/methods/rcsl.md §3.2) in float64 and float32, training then eval mode; float64 gradchecks of each encoder and of
// the whole similarity matrix; padding and length semantics; the text dropout.
#include <cmath>
#include <filesystem>
#include <string>

#include "models/vse_model.h"
#include "test_util.h"

namespace rematch {
namespace {

using models::VseConfig;
using models::VseModel;
using test::all_close;
using test::random_tensor;

Tensor vse_fixture(const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/vse/" + name + ".npy");
}
bool has_vse_fixture(const std::string& name) {
  return std::filesystem::exists(std::string(REMATCH_FIXTURES) + "/vse/" + name + ".npy");
}

// The sizes of vse_reference.py; its text dropout is off (the golden calls compare deterministic paths).
VseConfig golden_config() {
  VseConfig c;
  c.vocab_size = 13;
  c.img_dim = 6;
  c.word_dim = 5;
  c.embed_size = 8;
  c.text_dropout = 0;
  return c;
}

VseConfig gradcheck_config() {
  VseConfig c;
  c.vocab_size = 5;
  c.img_dim = 3;
  c.word_dim = 3;
  c.embed_size = 4;
  c.text_dropout = 0;
  return c;
}

TensorList cloned_parameters(const nn::Module& m) {
  TensorList out;
  for (const Tensor& p : m.parameters()) out.push_back(kernels::clone(p));
  return out;
}

TEST(VseModel, StateDictNamesFollowTheOfficialEncoders) {
  Generator gen(1);
  VseModel model(golden_config(), DType::Float32, &gen);
  const std::vector<std::string> want = {
      "img_enc.fc.weight", "img_enc.fc.bias", "img_enc.mlp.layers.0.weight", "img_enc.mlp.layers.0.bias",
      "img_enc.mlp.layers.1.weight", "img_enc.mlp.layers.1.bias", "img_enc.mlp.bns.0.weight",
      "img_enc.mlp.bns.0.bias", "img_enc.mlp.bns.0.running_mean", "img_enc.mlp.bns.0.running_var",
      "img_enc.mlp.bns.0.num_batches_tracked", "img_enc.mlp.bns.1.weight", "img_enc.mlp.bns.1.bias",
      "img_enc.mlp.bns.1.running_mean", "img_enc.mlp.bns.1.running_var", "img_enc.mlp.bns.1.num_batches_tracked",
      "img_enc.linear1.weight", "img_enc.linear1.bias", "txt_enc.embed.weight", "txt_enc.rnn.weight_ih_l0",
      "txt_enc.rnn.weight_hh_l0", "txt_enc.rnn.bias_ih_l0", "txt_enc.rnn.bias_hh_l0",
      "txt_enc.rnn.weight_ih_l0_reverse", "txt_enc.rnn.weight_hh_l0_reverse", "txt_enc.rnn.bias_ih_l0_reverse",
      "txt_enc.rnn.bias_hh_l0_reverse", "txt_enc.linear1.weight", "txt_enc.linear1.bias"};
  const nn::StateDict sd = model.state_dict();
  ASSERT_EQ(sd.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(sd[k].first, want[k]);
  // Every state-dict entry of the PyTorch transcription loads without renaming.
  nn::StateDict official;
  for (const auto& [name, value] : sd) official.emplace_back(name, vse_fixture("state." + name));
  EXPECT_NO_THROW(model.load_state_dict(official));
}

TEST(VseModel, ParameterCountsAtFullSize) {
  // torch.nn modules of encoders.py at img_dim 2048, embed 1024, word_dim 300, V = 8,481 (F30K):
  // image 4,725,248 (fc 2,098,176 + MLP 1,576,448 incl. both BatchNorms + linear1 1,049,600), text 11,740,844.
  VseConfig c;
  c.vocab_size = 8481;
  Generator gen(0);
  VseModel model(c, DType::Float32, &gen);
  EXPECT_EQ(model.img_enc().parameter_count(), 4725248);
  EXPECT_EQ(model.txt_enc().parameter_count(), 11740844);
  EXPECT_EQ(model.parameter_count(), 16466092);
}

TEST(VseModel, InitialisationFollowsTheOfficialInitWeights) {
  VseConfig c = golden_config();
  c.img_dim = 40;
  c.embed_size = 24;
  Generator gen(5);
  VseModel model(c, DType::Float64, &gen);
  auto within = [](const Tensor& t, double bound) {
    for (double v : t.to_vector<double>())
      if (std::fabs(v) > bound) return false;
    return true;
  };
  const nn::Module& img = model.img_enc();
  for (const char* name : {"fc", "linear1"}) {
    // Xavier-uniform: U(-r, r), r = √6 / √(in + out); zero bias.
    const auto params = img.named_parameters();
    for (const auto& [pname, p] : params) {
      if (pname == std::string(name) + ".weight") {
        const double r = std::sqrt(6.0 / static_cast<double>(p.size(0) + p.size(1)));
        EXPECT_TRUE(within(p, r)) << pname;
        EXPECT_GT(kernels::reduce(kernels::ReduceOp::Max, kernels::unary(kernels::UnaryOp::Abs, p), {}, false)
                      .item<double>(),
                  0.8 * r)
            << pname << " should fill its Xavier range";
      }
      if (pname == std::string(name) + ".bias") EXPECT_TRUE(test::values_equal(p, std::vector<double>(24, 0.0)));
    }
  }
  EXPECT_TRUE(within(model.txt_enc().word_embeddings(), 0.1));  // U(-0.1, 0.1)
  for (const auto& [name, p] : model.named_parameters()) {
    if (name.find("bns") == std::string::npos) continue;
    const double want = name.find("weight") != std::string::npos ? 1.0 : 0.0;
    EXPECT_TRUE(test::values_equal(p, std::vector<double>(static_cast<size_t>(p.numel()), want))) << name;
  }
}

// The golden comparison: training-mode call (BatchNorm on batch statistics), then eval mode.
void check_golden(DType dtype, double atol, double rtol) {
  Generator gen(2);
  VseModel model(golden_config(), dtype, &gen);
  nn::StateDict official;
  for (const auto& [name, value] : model.state_dict()) official.emplace_back(name, vse_fixture("state." + name));
  model.load_state_dict(official);
  const Tensor images = kernels::cast(vse_fixture("images"), dtype);
  const Tensor weights = kernels::cast(vse_fixture("weights"), dtype);
  for (const std::string mode : {"train", "eval"}) {
    SCOPED_TRACE(mode);
    model.train(mode == "train");
    model.zero_grad();
    const models::VseEmbeddings emb = model.forward(images, vse_fixture("image_lengths"), vse_fixture("captions"),
                                                    vse_fixture("caption_lengths"));
    const Tensor sims = VseModel::similarity(emb.images, emb.captions);
    EXPECT_TRUE(all_close(emb.images, vse_fixture(mode + ".img_emb"), atol, rtol));
    EXPECT_TRUE(all_close(emb.captions, vse_fixture(mode + ".cap_emb"), atol, rtol));
    EXPECT_TRUE(all_close(sims, vse_fixture(mode + ".sims"), atol, rtol));
    backward(sum(mul(sims, weights)));
    for (const auto& [name, p] : model.named_parameters()) {
      if (has_vse_fixture(mode + ".grad." + name)) {
        ASSERT_TRUE(p.grad().defined()) << name;
        EXPECT_TRUE(all_close(p.grad(), vse_fixture(mode + ".grad." + name), atol, rtol)) << name;
      } else {
        EXPECT_FALSE(p.grad().defined()) << name << ": PyTorch leaves this parameter without a gradient";
      }
    }
    if (mode == "train") {
      for (const auto& [name, b] : model.named_buffers())
        EXPECT_TRUE(all_close(b, vse_fixture("train.state." + name), atol, rtol)) << name;
    }
  }
}

TEST(VseModel, MatchesPyTorchInFloat64) {
  // Same arithmetic in the same precision; only summation order differs (observed worst 9e-16 absolute).
  check_golden(DType::Float64, 1e-12, 1e-10);
}

TEST(VseModel, MatchesPyTorchInFloat32) {
  // Float32 against the float64 reference: unit-norm embeddings and O(1) gradients through ~10 chained ops
  // (GRU recurrences, BatchNorm over 20 rows, two softmax poolings, l2 normalisation), each adding a few ulps
  // (6e-8). Observed worst: 1.2e-7 absolute on the embeddings and similarities, 5e-7 on the gradients, so
  // 1e-5 absolute plus 1e-4 relative leaves a margin of 20 while any formula error (1e-2 and above) fails.
  check_golden(DType::Float32, 1e-5, 1e-4);
}

TEST(VseImageEncoder, GradcheckTrainingAndEvalModes) {
  Generator gen(3);
  VseModel model(gradcheck_config(), DType::Float64, &gen);
  models::VseImageEncoder& enc = model.img_enc();
  TensorList inputs{random_tensor({3, 3, 3}, DType::Float64, 11)};
  for (const Tensor& p : cloned_parameters(enc)) inputs.push_back(p);
  const Tensor lengths = from_vector<int64_t>({3, 1, 2});
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "train" : "eval");
    enc.train(training);
    EXPECT_GRADCHECK(
        [&](const TensorList& in) {
          return enc.forward_with(TensorList(in.begin() + 1, in.end()), in[0], lengths);
        },
        inputs);
  }
}

TEST(VseTextEncoder, GradcheckMixedLengths) {
  Generator gen(4);
  VseModel model(gradcheck_config(), DType::Float64, &gen);
  models::VseTextEncoder& enc = model.txt_enc();
  const Tensor ids = from_vector<int64_t>({1, 2, 3, 4, 0, 3, 1, 0, 0, 0, 4, 4, 2, 0, 0}, {3, 5});
  const Tensor lengths = from_vector<int64_t>({4, 2, 3});
  EXPECT_GRADCHECK(
      [&](const TensorList& in) { return enc.forward_with(in, ids, lengths); }, cloned_parameters(enc));
}

TEST(VseModel, GradcheckOfTheSimilarityMatrix) {
  Generator gen(6);
  VseModel model(gradcheck_config(), DType::Float64, &gen);
  const Tensor images = random_tensor({2, 3, 3}, DType::Float64, 12);
  const Tensor image_lengths = from_vector<int64_t>({3, 2});
  const Tensor ids = from_vector<int64_t>({1, 2, 3, 4, 2, 1, 0, 0, 3, 3, 1, 0}, {3, 4});
  const Tensor lengths = from_vector<int64_t>({4, 2, 3});
  EXPECT_GRADCHECK(
      [&](const TensorList& in) {
        const models::VseEmbeddings e = model.forward_with(in, images, image_lengths, ids, lengths);
        return VseModel::similarity(e.images, e.captions);
      },
      cloned_parameters(model));
}

TEST(VseModel, PaddingIsIgnoredInEvalMode) {
  Generator gen(7);
  VseModel model(golden_config(), DType::Float64, &gen);
  model.eval();
  const Tensor images = random_tensor({2, 5, 6}, DType::Float64, 21);
  const Tensor image_lengths = from_vector<int64_t>({5, 3});
  const Tensor ids = from_vector<int64_t>({1, 5, 6, 7, 2, 1, 8, 2, 0, 0}, {2, 5});
  const Tensor lengths = from_vector<int64_t>({5, 3});
  const models::VseEmbeddings ref = model.forward(images, image_lengths, ids, lengths);
  // Garbage in the padded region rows and word slots, and extra padding columns, change nothing.
  Tensor noisy_images = kernels::clone(images);
  kernels::fill_(kernels::narrow(kernels::select(noisy_images, 0, 1), 0, 3, 2), 123.0);
  const Tensor wide_images = kernels::pad(noisy_images, 1, 0, 2, -7.0);
  const Tensor noisy_ids = from_vector<int64_t>({1, 5, 6, 7, 2, 0, 1, 8, 2, 9, 11, 0}, {2, 6});
  const models::VseEmbeddings got = model.forward(wide_images, image_lengths, noisy_ids, lengths);
  EXPECT_TRUE(all_close(got.images, ref.images, 1e-14, 0));
  EXPECT_TRUE(all_close(got.captions, ref.captions, 1e-14, 0));
  // Each row is a unit vector up to the 1e-8 on the norm (squared norm 1 − 2e-8/‖v‖), so the similarity of an
  // item with itself is 1: cosine similarity.
  EXPECT_TRUE(all_close(sum(mul(ref.images, ref.images), {1}), ones({2}, DType::Float64), 1e-6, 0));
}

TEST(VseModel, TrainingBatchNormCountsPaddingRows) {
  // docs/methods/rcsl.md §3.2: BatchNorm over the flattened B·R rows, padding included. Changing a padding row moves
  // the batch statistics and so the valid images' embeddings in training mode.
  Generator gen(8);
  VseModel model(golden_config(), DType::Float64, &gen);
  const Tensor images = random_tensor({2, 4, 6}, DType::Float64, 22);
  const Tensor lengths = from_vector<int64_t>({4, 2});
  const Tensor a = model.encode_images(images, lengths);
  Tensor changed = kernels::clone(images);
  kernels::fill_(kernels::narrow(kernels::select(changed, 0, 1), 0, 2, 2), 3.0);
  const Tensor b = model.encode_images(changed, lengths);
  EXPECT_FALSE(all_close(select(a, 0, 0), select(b, 0, 0), 1e-6, 0));
  EXPECT_EQ(model.img_enc().named_buffers()[2].second.item<int64_t>(), 2);  // mlp.bns.0.num_batches_tracked
}

TEST(VseTextEncoder, EmptyCaptionsReadOnePosition) {
  // encoders.py clamps lengths to 1: a length-0 caption is encoded like the length-1 caption of its first id.
  Generator gen(9);
  VseModel model(golden_config(), DType::Float64, &gen);
  model.eval();
  const Tensor ids = from_vector<int64_t>({0, 0, 0, 4, 5, 6}, {2, 3});
  const Tensor zero = model.encode_captions(ids, from_vector<int64_t>({0, 3}));
  const Tensor one = model.encode_captions(ids, from_vector<int64_t>({1, 3}));
  EXPECT_TRUE(all_close(zero, one, 0, 0));
}

TEST(VseTextEncoder, DropoutOnlyInTrainingAndReproducible) {
  VseConfig c = golden_config();
  c.text_dropout = 0.1;
  const Tensor ids = from_vector<int64_t>({1, 5, 6, 7, 2, 1, 8, 9, 10, 2}, {2, 5});
  const Tensor lengths = from_vector<int64_t>({5, 5});
  Generator gen_a(10), gen_b(10);
  VseModel a(c, DType::Float64, &gen_a), b(c, DType::Float64, &gen_b);
  const Tensor train_a = a.encode_captions(ids, lengths);
  EXPECT_TRUE(all_close(b.encode_captions(ids, lengths), train_a, 0, 0));  // same seed, same mask
  a.eval();
  const Tensor eval_a = a.encode_captions(ids, lengths);
  EXPECT_FALSE(all_close(eval_a, train_a, 1e-9, 0));
  EXPECT_TRUE(all_close(a.encode_captions(ids, lengths), eval_a, 0, 0));
}

TEST(VseModel, RejectsBadInputs) {
  Generator gen(11);
  VseModel model(golden_config(), DType::Float32, &gen);
  const Tensor images = zeros({2, 3, 6});
  EXPECT_THROWS_WITH(model.encode_images(images, from_vector<int64_t>({0, 3})), "VseImageEncoder", "lengths[0]");
  EXPECT_THROWS_WITH(model.encode_images(images, from_vector<int64_t>({4, 3})), "out of range 1..3");
  EXPECT_THROWS_WITH(model.encode_images(zeros({2, 3, 5}), from_vector<int64_t>({1, 3})), "[B, R, 6]");
  EXPECT_THROWS_WITH(model.encode_captions(from_vector<int64_t>({1, 2}, {1, 2}), from_vector<int64_t>({3})),
                     "VseTextEncoder", "out of range 1..2");
  EXPECT_THROWS_WITH(VseModel::similarity(zeros({2, 8}), zeros({2, 7})), "similarity");
  VseConfig no_vocab = golden_config();
  no_vocab.vocab_size = 0;
  EXPECT_THROWS_WITH(VseModel bad(no_vocab), "vocab_size");
}

}  // namespace
}  // namespace rematch
