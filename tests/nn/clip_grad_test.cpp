// clip_grad_norm_ against torch.nn.utils.clip_grad_norm_ (fixtures from tests/reference/optim_reference.py).
#include "nn/clip_grad.h"

#include <cmath>
#include <string>

#include "test_util.h"

namespace rematch::nn {
namespace {

using test::all_close;

// Why 1e-12 and not bit equality: PyTorch sums |g|^p in its own reduction order (and computes p = 2 norms
// through its own kernel) where we sum in ours; each order rounds differently by ~1e-16 relative in float64.
constexpr double kTol = 1e-12;

Tensor fixture(const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/optim/" + name + ".npy");
}

std::vector<Tensor> params_with_fixture_grads() {
  std::vector<Tensor> params;
  for (int i = 0; i < 3; ++i) {
    const Tensor g = fixture("clip_g" + std::to_string(i));
    Tensor p = zeros_like(g);
    p.requires_grad_(true);
    p.set_grad(kernels::clone(g));
    params.push_back(p);
  }
  return params;
}

struct ClipCase {
  const char* name;
  double max_norm, norm_type;
};

TEST(ClipGrad, MatchesTorch) {
  for (const ClipCase& c : {ClipCase{"p2", 1.0, 2}, ClipCase{"p1", 0.5, 1}, ClipCase{"pinf", 0.3, kInfNorm},
                            ClipCase{"p3", 2.0, 3}, ClipCase{"noclip", 100.0, 2}}) {
    const std::vector<Tensor> params = params_with_fixture_grads();
    const double norm = clip_grad_norm_(params, c.max_norm, c.norm_type);
    const double want = fixture(std::string("clip_") + c.name + "_norm").item<double>();
    EXPECT_NEAR(norm, want, kTol * want) << c.name;
    for (int i = 0; i < 3; ++i)
      EXPECT_TRUE(all_close(params[i].grad(), fixture(std::string("clip_") + c.name + "_g" + std::to_string(i)), kTol, 0))
          << c.name << " gradient " << i;
  }
}

TEST(ClipGrad, UnclippedGradientsAreUntouched) {
  const std::vector<Tensor> params = params_with_fixture_grads();
  clip_grad_norm_(params, 100.0);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(all_close(params[i].grad(), fixture("clip_g" + std::to_string(i)), 0, 0));
}

TEST(ClipGrad, ParametersWithoutGradientAreIgnored) {
  std::vector<Tensor> params = params_with_fixture_grads();
  Tensor bare = zeros({4}, DType::Float64);
  bare.requires_grad_(true);
  params.push_back(bare);
  const double norm = clip_grad_norm_(params, 1.0);
  EXPECT_NEAR(norm, fixture("clip_p2_norm").item<double>(), kTol);
  EXPECT_FALSE(bare.grad().defined());
  EXPECT_EQ(clip_grad_norm_({bare}, 1.0), 0.0);
}

TEST(ClipGrad, Float32GradientsAreClippedToMaxNorm) {
  Tensor p = zeros({3}, DType::Float32);
  p.requires_grad_(true);
  p.set_grad(from_vector<float>({3, 0, -4}));
  EXPECT_DOUBLE_EQ(clip_grad_norm_({p}, 1.0), 5.0);
  EXPECT_TRUE(all_close(p.grad(), from_vector<float>({0.6f, 0, -0.8f}), 1e-6, 0));
}

TEST(ClipGrad, NonFiniteNorm) {
  Tensor p = zeros({2}, DType::Float64);
  p.requires_grad_(true);
  p.set_grad(from_vector<double>({1, INFINITY}));
  EXPECT_THROWS_WITH(clip_grad_norm_({p}, 1.0, 2, true), "clip_grad_norm_", "inf");
  // Without the check PyTorch scales by max_norm / inf = 0 (and inf · 0 = NaN); so do we.
  EXPECT_TRUE(std::isinf(clip_grad_norm_({p}, 1.0)));
  EXPECT_EQ(p.grad().to_vector<double>()[0], 0.0);
  EXPECT_TRUE(std::isnan(p.grad().to_vector<double>()[1]));
}

TEST(ClipGrad, RejectsBadArguments) {
  const std::vector<Tensor> params = params_with_fixture_grads();
  EXPECT_THROWS_WITH(clip_grad_norm_(params, -1.0), "max_norm must be finite and >= 0");
  EXPECT_THROWS_WITH(clip_grad_norm_(params, 1.0, 0), "norm_type must be > 0");
}

}  // namespace
}  // namespace rematch::nn
