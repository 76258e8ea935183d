// nn::BatchNorm1d and nn::batch_norm: state-dict names and initial values, a hand-worked training step
// (biased normalisation, unbiased momentum update), PyTorch's nn.BatchNorm1d on [N, C] and [N, C, L]
// (tests/fixtures/nn_layers/batchnorm_{2d,3d}: three training calls, running statistics after each, eval,
// gradients in both modes) in float64 and float32, float64 gradchecks of the functional form, and errors.
#include <cmath>

#include "nn/nn.h"
#include "nn_layers_fixture.h"

namespace rematch {
namespace {

using nn::BatchNorm1d;
using test::nn_fixture;
using test::random_tensor;

TEST(BatchNorm1d, StateDictNamesAndInitialValues) {
  BatchNorm1d bn(3);
  const nn::StateDict sd = bn.state_dict();
  ASSERT_EQ(sd.size(), 5u);
  const char* names[] = {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(sd[i].first, names[i]);
  EXPECT_TRUE(test::values_equal(sd[0].second, {1, 1, 1}));
  EXPECT_TRUE(test::values_equal(sd[1].second, {0, 0, 0}));
  EXPECT_TRUE(test::values_equal(sd[2].second, {0, 0, 0}));
  EXPECT_TRUE(test::values_equal(sd[3].second, {1, 1, 1}));
  EXPECT_EQ(sd[4].second.dtype(), DType::Int64);
  EXPECT_EQ(sd[4].second.dim(), 0);
  EXPECT_EQ(bn.parameters().size(), 2u);
  EXPECT_EQ(BatchNorm1d(3, 1e-5, 0.1, false).parameters().size(), 0u);
}

TEST(BatchNorm1d, HandWorkedTrainingStep) {
  // One channel, values 1 and 3: mean 2, biased variance 1 (normalisation), unbiased 2 (running update).
  BatchNorm1d bn(1, 1e-5, 0.1, true, DType::Float64);
  Tensor y = bn(from_vector<double>({1, 3}, {2, 1}));
  const double s = 1 / std::sqrt(1 + 1e-5);
  EXPECT_TRUE(test::values_equal(y, {-s, s}, 1e-15));
  EXPECT_TRUE(test::values_equal(bn.buffer("running_mean"), {0.2}, 1e-15));
  EXPECT_TRUE(test::values_equal(bn.buffer("running_var"), {0.9 + 0.1 * 2}, 1e-15));
  EXPECT_EQ(bn.buffer("num_batches_tracked").item<int64_t>(), 1);
  bn.eval();
  bn(from_vector<double>({5, 7}, {2, 1}));
  EXPECT_EQ(bn.buffer("num_batches_tracked").item<int64_t>(), 1);  // eval leaves the statistics alone
  EXPECT_TRUE(test::values_equal(bn.buffer("running_mean"), {0.2}, 1e-15));
}

TEST(BatchNorm1d, ForwardIsTheFunctionalForm) {
  BatchNorm1d bn(3, 1e-5, 0.1, true, DType::Float64);
  nn::uniform_(bn.parameter("weight"), 0.5, 1.5);
  Tensor x = random_tensor({4, 3, 2}, DType::Float64, 1);
  Tensor rm = zeros({3}, DType::Float64), rv = ones({3}, DType::Float64);
  EXPECT_TRUE(test::all_close(bn(x), nn::batch_norm(x, bn.parameter("weight"), bn.parameter("bias"), rm, rv, true),
                              0, 0));
  EXPECT_TRUE(test::all_close(bn.buffer("running_var"), rv, 0, 0));
  bn.eval();
  EXPECT_TRUE(test::all_close(bn(x), nn::batch_norm(x, bn.parameter("weight"), bn.parameter("bias"), rm, rv, false),
                              0, 0));
}

// The module against torch.nn.BatchNorm1d: three training calls (output and running statistics after each,
// gradients of sum(y3 * r)), then eval (output, gradients of sum(y_eval * r_eval)).
void check_golden(const std::string& c, DType dtype, double atol, double rtol) {
  auto fx = [&](const std::string& name) { return nn_fixture(c, name); };
  auto in = [&](const std::string& name) { return nn_fixture(c, name, dtype); };
  BatchNorm1d bn(fx("weight").numel(), 1e-5, 0.1, true, dtype);
  kernels::copy_(bn.parameter("weight"), fx("weight"));
  kernels::copy_(bn.parameter("bias"), fx("bias"));
  Tensor y, x;
  for (int call = 1; call <= 3; ++call) {
    const std::string k = std::to_string(call);
    x = in("x" + k);
    if (call == 3) x.requires_grad_(true);
    y = bn(x);
    EXPECT_TRUE(test::all_close(y, fx("y" + k), atol, rtol)) << c << " call " << call;
    EXPECT_TRUE(test::all_close(bn.buffer("running_mean"), fx("running_mean" + k), atol, rtol)) << c << " " << k;
    EXPECT_TRUE(test::all_close(bn.buffer("running_var"), fx("running_var" + k), atol, rtol)) << c << " " << k;
  }
  EXPECT_EQ(bn.buffer("num_batches_tracked").item<int64_t>(), fx("num_batches_tracked").item<int64_t>());
  backward(sum(mul(y, in("r"))));
  EXPECT_TRUE(test::all_close(x.grad(), fx("grad_x"), atol, rtol)) << c;
  EXPECT_TRUE(test::all_close(bn.parameter("weight").grad(), fx("grad_weight"), atol, rtol)) << c;
  EXPECT_TRUE(test::all_close(bn.parameter("bias").grad(), fx("grad_bias"), atol, rtol)) << c;

  bn.eval();
  bn.zero_grad();
  Tensor xe = in("x_eval");
  xe.requires_grad_(true);
  Tensor ye = bn(xe);
  EXPECT_TRUE(test::all_close(ye, fx("y_eval"), atol, rtol)) << c;
  backward(sum(mul(ye, in("r_eval"))));
  EXPECT_TRUE(test::all_close(xe.grad(), fx("grad_x_eval"), atol, rtol)) << c;
  EXPECT_TRUE(test::all_close(bn.parameter("weight").grad(), fx("grad_weight_eval"), atol, rtol)) << c;
  EXPECT_TRUE(test::all_close(bn.parameter("bias").grad(), fx("grad_bias_eval"), atol, rtol)) << c;
}

TEST(BatchNorm1dGolden, MatchesTorchFloat64NC) { check_golden("batchnorm_2d", DType::Float64, 1e-12, 1e-11); }
TEST(BatchNorm1dGolden, MatchesTorchFloat64NCL) { check_golden("batchnorm_3d", DType::Float64, 1e-12, 1e-11); }

// float32: inputs of magnitude up to ~14 rounded to float32, per-channel sums over at most 20 values, a
// division by the standard deviation and, in the training gradient, the cancellation
// g − mean(g) − x̂·mean(g·x̂): together below 1e-6 absolute on O(1) results (8e-7 measured). 5e-6 absolute
// keeps a margin without hiding a wrong formula (a missing n/(n-1) or a missing term is off by > 1e-2).
TEST(BatchNorm1dGolden, MatchesTorchFloat32NC) { check_golden("batchnorm_2d", DType::Float32, 5e-6, 1e-6); }
TEST(BatchNorm1dGolden, MatchesTorchFloat32NCL) { check_golden("batchnorm_3d", DType::Float32, 5e-6, 1e-6); }

Tensor rnd(const Shape& s, uint32_t seed, double lo = -2, double hi = 2) {
  return random_tensor(s, DType::Float64, seed, lo, hi);
}

TEST(BatchNormGrad, TrainingNC) {
  EXPECT_GRADCHECK([](const TensorList& t) { return nn::batch_norm(t[0], t[1], t[2], Tensor(), Tensor(), true); },
                   {rnd({4, 3}, 1), rnd({3}, 2, 0.5, 1.5), rnd({3}, 3)});
}

TEST(BatchNormGrad, TrainingNCL) {
  EXPECT_GRADCHECK([](const TensorList& t) { return nn::batch_norm(t[0], t[1], t[2], Tensor(), Tensor(), true); },
                   {rnd({3, 2, 4}, 4), rnd({2}, 5, 0.5, 1.5), rnd({2}, 6)});
}

TEST(BatchNormGrad, TrainingWithoutAffineOnTransposedInput) {
  EXPECT_GRADCHECK(
      [](const TensorList& t) {
        return nn::batch_norm(transpose(t[0], 0, 2), Tensor(), Tensor(), Tensor(), Tensor(), true);
      },
      {rnd({4, 2, 3}, 7)});
}

TEST(BatchNormGrad, EvalUsesRunningStatisticsAsConstants) {
  const Tensor rm = rnd({3}, 8), rv = rnd({3}, 9, 0.5, 2);
  EXPECT_GRADCHECK([&](const TensorList& t) { return nn::batch_norm(t[0], t[1], t[2], rm, rv, false); },
                   {rnd({2, 3, 2}, 10), rnd({3}, 11), rnd({3}, 12)});
}

TEST(BatchNorm1d, ErrorsNameTheModuleAndShapes) {
  BatchNorm1d bn(3);
  EXPECT_THROWS_WITH(bn(zeros({4, 5})), "BatchNorm1d(3)", "[N, 3]", "[4, 5]");
  EXPECT_THROWS_WITH(bn(zeros({2, 3, 4, 5})), "BatchNorm1d(3)", "[2, 3, 4, 5]");
  EXPECT_THROWS_WITH(bn(zeros({1, 3})), "BatchNorm1d(3)", "more than 1 value per channel", "[1, 3]");
  EXPECT_THROWS_WITH(bn(zeros({2, 3}, DType::Float64)), "BatchNorm1d(3)", "float64[2, 3]", "float32[3]");
  bn.eval();
  EXPECT_EQ(bn(zeros({1, 3})).sizes(), (Shape{1, 3}));  // eval needs no batch statistics
  EXPECT_THROWS_WITH(nn::batch_norm(zeros({2, 3}), Tensor(), Tensor(), Tensor(), Tensor(), false), "batch_norm",
                     "running_mean");
  EXPECT_THROWS_WITH(nn::batch_norm(zeros({2, 3}), zeros({4}), Tensor(), Tensor(), Tensor(), true), "batch_norm",
                     "[2, 3]", "[4]");
}

}  // namespace
}  // namespace rematch
