// nn::Linear and nn::linear: parameters and PyTorch's default initialisation, the functional form's float64
// gradients for 1-D, 2-D and 3-D inputs with and without bias, the module against PyTorch's nn.Linear
// (tests/fixtures/nn_layers/linear) in float64 and float32, and the shape error.
#include <algorithm>
#include <cmath>

#include "nn/nn.h"
#include "nn_layers_fixture.h"

namespace rematch {
namespace {

using nn::Linear;
using test::nn_fixture;
using test::random_tensor;

TEST(Linear, ParametersFollowPyTorchLayout) {
  Linear layer(4, 3);
  EXPECT_EQ(layer.weight().sizes(), (Shape{3, 4}));
  EXPECT_EQ(layer.bias().sizes(), (Shape{3}));
  EXPECT_EQ(layer.weight().dtype(), DType::Float32);
  const nn::StateDict sd = layer.state_dict();
  ASSERT_EQ(sd.size(), 2u);
  EXPECT_EQ(sd[0].first, "weight");
  EXPECT_EQ(sd[1].first, "bias");
  EXPECT_EQ(layer.parameter_count(), 15);
  Linear no_bias(4, 3, false, DType::Float64);
  EXPECT_FALSE(no_bias.has_bias());
  EXPECT_EQ(no_bias.state_dict().size(), 1u);
  EXPECT_EQ(no_bias.weight().dtype(), DType::Float64);
}

TEST(Linear, DefaultInitIsUniformWithinOneOverSqrtIn) {
  Generator gen(11);
  Linear layer(16, 64, true, DType::Float32, &gen);
  const double bound = 1.0 / std::sqrt(16.0);
  for (const Tensor& p : {layer.weight(), layer.bias()}) {
    std::vector<double> v = p.to_vector<double>();
    double lo = 1, hi = -1;
    for (double e : v) lo = std::min(lo, e), hi = std::max(hi, e);
    EXPECT_GE(lo, -bound);
    EXPECT_LT(hi, bound);
    EXPECT_LT(lo, -0.8 * bound);  // the draws fill the interval, not a corner of it
    EXPECT_GT(hi, 0.8 * bound);
  }
  Generator same(11);
  Linear again(16, 64, true, DType::Float32, &same);
  EXPECT_TRUE(test::all_close(again.weight(), layer.weight(), 0, 0));
  EXPECT_TRUE(test::all_close(again.bias(), layer.bias(), 0, 0));
}

TEST(Linear, ForwardIsTheFunctionalForm) {
  Linear layer(4, 3, true, DType::Float64);
  Tensor x = random_tensor({2, 5, 4}, DType::Float64, 1);
  EXPECT_TRUE(test::all_close(layer(x), nn::linear(x, layer.weight(), layer.bias()), 0, 0));
  // y = x Wᵀ + b on one row, by hand.
  Tensor row = random_tensor({4}, DType::Float64, 2);
  std::vector<double> w = layer.weight().to_vector<double>(), b = layer.bias().to_vector<double>(),
                      xv = row.to_vector<double>(), want(3);
  for (int o = 0; o < 3; ++o) {
    want[o] = b[o];
    for (int i = 0; i < 4; ++i) want[o] += w[o * 4 + i] * xv[i];
  }
  EXPECT_TRUE(test::values_equal(layer(row), want, 1e-14));
}

TEST(LinearGrad, Functional2D) {
  EXPECT_GRADCHECK([](const TensorList& t) { return nn::linear(t[0], t[1], t[2]); },
                   {random_tensor({3, 4}, DType::Float64, 3), random_tensor({5, 4}, DType::Float64, 4),
                    random_tensor({5}, DType::Float64, 5)});
}

TEST(LinearGrad, Functional3DLeadingDims) {
  EXPECT_GRADCHECK([](const TensorList& t) { return nn::linear(t[0], t[1], t[2]); },
                   {random_tensor({2, 3, 4}, DType::Float64, 6), random_tensor({2, 4}, DType::Float64, 7),
                    random_tensor({2}, DType::Float64, 8)});
}

TEST(LinearGrad, Functional4DTransposedInputNoBias) {
  EXPECT_GRADCHECK([](const TensorList& t) { return nn::linear(transpose(t[0], 0, 2), t[1], Tensor()); },
                   {random_tensor({3, 2, 2, 4}, DType::Float64, 9), random_tensor({3, 4}, DType::Float64, 10)});
}

TEST(LinearGrad, Functional1DInput) {
  EXPECT_GRADCHECK([](const TensorList& t) { return nn::linear(t[0], t[1], t[2]); },
                   {random_tensor({4}, DType::Float64, 11), random_tensor({3, 4}, DType::Float64, 12),
                    random_tensor({3}, DType::Float64, 13)});
}

// The module against torch.nn.Linear(4, 5) on x [2, 3, 4]: output and the gradients of sum(y * r).
void check_golden(DType dtype, double atol, double rtol) {
  Linear layer(4, 5, true, dtype);
  layer.load_state_dict({{"weight", nn_fixture("linear", "weight")}, {"bias", nn_fixture("linear", "bias")}});
  Tensor x = nn_fixture("linear", "x", dtype);
  x.requires_grad_(true);
  Tensor y = layer(x);
  EXPECT_TRUE(test::all_close(y, nn_fixture("linear", "y"), atol, rtol));
  backward(sum(mul(y, nn_fixture("linear", "r", dtype))));
  EXPECT_TRUE(test::all_close(x.grad(), nn_fixture("linear", "grad_x"), atol, rtol));
  EXPECT_TRUE(test::all_close(layer.weight().grad(), nn_fixture("linear", "grad_weight"), atol, rtol));
  EXPECT_TRUE(test::all_close(layer.bias().grad(), nn_fixture("linear", "grad_bias"), atol, rtol));
}

TEST(LinearGolden, MatchesTorchFloat64) { check_golden(DType::Float64, 1e-13, 1e-12); }

// float32: the inputs are the float64 fixture values rounded to float32 (relative error 2^-24 ≈ 6e-8 each)
// and every output is a sum of at most 6 products of O(1) values, so errors stay below 1e-6 (4e-7 measured);
// 2e-6 leaves room for another BLAS's summation order without hiding a wrong formula (off by O(0.1)).
TEST(LinearGolden, MatchesTorchFloat32) { check_golden(DType::Float32, 2e-6, 1e-6); }

TEST(Linear, WrongInputShapeNamesModuleAndBothShapes) {
  Linear layer(4, 5);
  EXPECT_THROWS_WITH(layer(zeros({2, 3})), "Linear(in_features=4, out_features=5)", "[2, 3]", "[5, 4]");
  EXPECT_THROWS_WITH(nn::linear(zeros({2, 4}), zeros({5, 4}), zeros({4})), "linear", "bias", "[5]");
  EXPECT_THROWS_WITH(layer(zeros({2, 4}, DType::Float64)), "Linear(in_features=4, out_features=5)", "float64[2, 4]",
                     "float32[5, 4]", "dtype");
  EXPECT_THROWS_WITH(Linear(0, 3), "Linear(in_features=0, out_features=3)", "positive");
}

}  // namespace
}  // namespace rematch
