// SGR and SAF against the PyTorch reference written from the spec (tests/reference/sgraf_reference.py,
// fixtures in tests/fixtures/sgraf/{sgr,saf}): 5 images × 5 captions of lengths 7 3 5 7 4, every parameter
// and BatchNorm statistic loaded by its official state-dict name; the eval-mode matrix, the train-mode matrix
// (dropout p = 0), the gradient of sum(S_train · r) for every parameter, and every buffer after the train
// call (VisualSA's running statistics updated once, SAF's once per caption, num_batches_tracked).
//
// The reference runs in float64 with the official per-caption loop; ours is batched and masked.
//   float64: 1e-10 relative — only the summation order differs.
//   float32: scores within 2e-6 (sigmoid outputs near 0.5, rounding of ≈ 1e-7 per op over a few dozen ops);
//   gradients within 2e-4 · max|g| of each tensor plus 2e-3 relative — float32 backward through the GRU
//   (7 steps), two BatchNorms and three graph steps loses ≈ 3–4 digits on the smallest entries, so each
//   tensor is judged against its own scale; running statistics within 1e-6.
#include <cmath>
#include <filesystem>

#include "model_test_util.h"
#include "models/sgraf_model.h"

namespace rematch::models {
namespace {

const std::string kDir = std::string(REMATCH_FIXTURES) + "/sgraf/";

Tensor fixture(const std::string& model, const std::string& name) { return load_npy(kDir + model + "/" + name + ".npy"); }

SgrafConfig fixture_config(SimilarityModule module) {
  SgrafConfig c;  // the DIMS of sgraf_reference.py
  c.module = module;
  c.vocab_size = 30;
  c.img_dim = 12;
  c.word_dim = 10;
  c.embed_size = 16;
  c.sim_dim = 8;
  c.num_regions = 6;
  c.sgr_step = 3;
  c.dropout = 0.0;
  return c;
}

struct Tolerance {
  double scores, grad_scale, grad_rel, buffers;
};

::testing::AssertionResult close_to_scale(const Tensor& got, const Tensor& want, double scale_tol, double rel) {
  const std::vector<double> w = want.to_vector<double>();
  double scale = 0;
  for (double v : w) scale = std::max(scale, std::fabs(v));
  return test::all_close(got, want, scale_tol * scale + 1e-300, rel);
}

void check_model(SimilarityModule module, DType dtype, const Tolerance& tol) {
  const std::string dir = module == SimilarityModule::SGR ? "sgr" : "saf";
  SgrafModel model(fixture_config(module), dtype);
  nn::StateDict state;
  for (const auto& [name, t] : model.state_dict()) state.emplace_back(name, fixture(dir, name));
  model.load_state_dict(state);
  const Tensor images = kernels::cast(fixture(dir, "images"), dtype);
  const Tensor captions = fixture(dir, "captions"), lengths = fixture(dir, "lengths");

  model.eval();
  {
    NoGradGuard no_grad;
    EXPECT_TRUE(test::all_close(model(images, captions, lengths), fixture(dir, "sims_eval"), tol.scores, 0))
        << dir << " eval";
  }
  model.train();
  const Tensor sims = model(images, captions, lengths);
  EXPECT_TRUE(test::all_close(sims, fixture(dir, "sims_train"), tol.scores, 0)) << dir << " train";
  backward(sum(mul(sims, kernels::cast(fixture(dir, "loss_weights"), dtype))));
  for (const auto& [name, p] : model.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_TRUE(close_to_scale(p.grad(), fixture(dir, "grad." + name), tol.grad_scale, tol.grad_rel))
        << dir << " grad." << name;
  }
  for (const auto& [name, b] : model.named_buffers())
    EXPECT_TRUE(test::all_close(b, fixture(dir, "after." + name), tol.buffers, 0)) << dir << " after." << name;
}

TEST(SgrafGolden, FixturesCoverEveryStateEntry) {
  for (SimilarityModule module : {SimilarityModule::SGR, SimilarityModule::SAF}) {
    const std::string dir = kDir + (module == SimilarityModule::SGR ? "sgr" : "saf");
    size_t state_files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string f = e.path().filename().string();
      if (f.rfind("img_enc.", 0) == 0 || f.rfind("txt_enc.", 0) == 0 || f.rfind("sim_enc.", 0) == 0) ++state_files;
    }
    EXPECT_EQ(state_files, SgrafModel(fixture_config(module)).state_dict().size()) << dir;
    EXPECT_EQ(fixture(module == SimilarityModule::SGR ? "sgr" : "saf", "lengths").to_vector<int64_t>(),
              (std::vector<int64_t>{7, 3, 5, 7, 4}));
  }
}

TEST(SgrafGolden, SgrFloat64) { check_model(SimilarityModule::SGR, DType::Float64, {1e-10, 1e-10, 1e-8, 1e-12}); }
TEST(SgrafGolden, SafFloat64) { check_model(SimilarityModule::SAF, DType::Float64, {1e-10, 1e-10, 1e-8, 1e-12}); }
TEST(SgrafGolden, SgrFloat32) { check_model(SimilarityModule::SGR, DType::Float32, {2e-6, 2e-4, 2e-3, 1e-6}); }
TEST(SgrafGolden, SafFloat32) { check_model(SimilarityModule::SAF, DType::Float32, {2e-6, 2e-4, 2e-3, 1e-6}); }

}  // namespace
}  // namespace rematch::models
