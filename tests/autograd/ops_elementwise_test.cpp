// float64 gradient checks for every elementwise op: broadcasting, non-contiguous inputs, scalars.
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;

Tensor R(Shape s, uint32_t seed, double lo = -1, double hi = 1) { return random_tensor(s, DType::Float64, seed, lo, hi); }
Tensor positive(Shape s, uint32_t seed) { return R(s, seed, 0.2, 2.0); }

TEST(OpsElementwiseGrad, AddBroadcast) {
  EXPECT_GRADCHECK([](const TensorList& x) { return add(x[0], x[1]); }, {R({3, 1, 4}, 1), R({2, 1}, 2)});
}
TEST(OpsElementwiseGrad, SubBroadcast) {
  EXPECT_GRADCHECK([](const TensorList& x) { return sub(x[0], x[1]); }, {R({4}, 3), R({3, 4}, 4)});
}
TEST(OpsElementwiseGrad, MulBroadcastNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return mul(transpose(x[0], 0, 1), x[1]); }, {R({4, 3}, 5), R({1, 4}, 6)});
}
TEST(OpsElementwiseGrad, DivBroadcast) {
  EXPECT_GRADCHECK([](const TensorList& x) { return div(x[0], x[1]); }, {R({2, 3}, 7), positive({3}, 8)});
}
TEST(OpsElementwiseGrad, ScalarArithmetic) {
  EXPECT_GRADCHECK([](const TensorList& x) { return add(mul(x[0], 2.5), 1.0); }, {R({5}, 9)});
  EXPECT_GRADCHECK([](const TensorList& x) { return rsub(3.0, div(x[0], 4.0)); }, {R({5}, 10)});
  EXPECT_GRADCHECK([](const TensorList& x) { return rdiv(2.0, x[0]); }, {positive({5}, 11)});
  EXPECT_GRADCHECK([](const TensorList& x) { return sub(x[0], 2.0); }, {R({5}, 11)});
}
TEST(OpsElementwiseGrad, NegAbs) {
  EXPECT_GRADCHECK([](const TensorList& x) { return neg(x[0]); }, {R({6}, 12)});
  EXPECT_GRADCHECK([](const TensorList& x) { return abs(x[0]); }, {R({6}, 13)});
}
TEST(OpsElementwiseGrad, ExpLogLog1p) {
  EXPECT_GRADCHECK([](const TensorList& x) { return exp(x[0]); }, {R({6}, 14)});
  EXPECT_GRADCHECK([](const TensorList& x) { return log(x[0]); }, {positive({6}, 15)});
  EXPECT_GRADCHECK([](const TensorList& x) { return log1p(x[0]); }, {positive({6}, 16)});
}
TEST(OpsElementwiseGrad, SqrtRsqrtPowSquareReciprocal) {
  EXPECT_GRADCHECK([](const TensorList& x) { return sqrt(x[0]); }, {positive({6}, 17)});
  EXPECT_GRADCHECK([](const TensorList& x) { return rsqrt(x[0]); }, {positive({6}, 18)});
  EXPECT_GRADCHECK([](const TensorList& x) { return pow(x[0], 2.7); }, {positive({6}, 19)});
  EXPECT_GRADCHECK([](const TensorList& x) { return pow(x[0], 3.0); }, {R({6}, 20)});
  EXPECT_GRADCHECK([](const TensorList& x) { return square(x[0]); }, {R({6}, 21)});
  EXPECT_GRADCHECK([](const TensorList& x) { return reciprocal(x[0]); }, {positive({6}, 22)});
}
TEST(OpsElementwiseGrad, TanhSigmoid) {
  EXPECT_GRADCHECK([](const TensorList& x) { return tanh(x[0]); }, {R({6}, 23, -3, 3)});
  EXPECT_GRADCHECK([](const TensorList& x) { return sigmoid(x[0]); }, {R({6}, 24, -3, 3)});
}
TEST(OpsElementwiseGrad, ReluLeakyRelu) {
  // Random values stay away from the kink at 0 by more than the finite-difference step.
  EXPECT_GRADCHECK([](const TensorList& x) { return relu(x[0]); }, {R({8}, 25)});
  EXPECT_GRADCHECK([](const TensorList& x) { return leaky_relu(x[0], 0.1); }, {R({8}, 26)});
}
TEST(OpsElementwiseGrad, ClampAndSign) {
  EXPECT_GRADCHECK([](const TensorList& x) { return clamp(x[0], -0.5, 0.5); }, {R({8}, 27)});
  EXPECT_GRADCHECK([](const TensorList& x) { return clamp_min(x[0], 0.1); }, {R({8}, 28)});
  EXPECT_GRADCHECK([](const TensorList& x) { return clamp_max(x[0], 0.1); }, {R({8}, 29)});
  EXPECT_GRADCHECK([](const TensorList& x) { return add(sign(x[0]), x[0]); }, {R({8}, 30)});
}
TEST(OpsElementwiseGrad, MaximumMinimumBroadcast) {
  EXPECT_GRADCHECK([](const TensorList& x) { return maximum(x[0], x[1]); }, {R({3, 4}, 31), R({4}, 32)});
  EXPECT_GRADCHECK([](const TensorList& x) { return minimum(x[0], x[1]); }, {R({3, 1}, 33), R({3, 4}, 34)});
}
TEST(OpsElementwiseGrad, WhereMaskedFill) {
  Tensor cond = gt(R({3, 4}, 35), 0.0);
  EXPECT_GRADCHECK([cond](const TensorList& x) { return where(cond, x[0], x[1]); }, {R({3, 4}, 36), R({4}, 37)});
  Tensor mask = gt(R({3, 1}, 38), 0.0);
  EXPECT_GRADCHECK([mask](const TensorList& x) { return masked_fill(x[0], mask, -2.0); }, {R({3, 4}, 39)});
}
TEST(OpsElementwiseGrad, CastsAndCopies) {
  EXPECT_GRADCHECK([](const TensorList& x) { return to(mul(to(x[0], DType::Float32), 2.0), DType::Float64); },
                   {R({4}, 40)}, GradcheckOptions{1e-3, 1e-4, 1e-3});
  EXPECT_GRADCHECK([](const TensorList& x) { return clone(transpose(x[0], 0, 1)); }, {R({2, 3}, 41)});
  EXPECT_GRADCHECK([](const TensorList& x) { return contiguous(transpose(x[0], 0, 1)); }, {R({2, 3}, 42)});
}
TEST(OpsElementwiseGrad, Operators) {
  EXPECT_GRADCHECK([](const TensorList& x) { return (x[0] + x[1]) * x[0] / (2.0 + x[1] * x[1]) - 1.0 + (-x[0]); },
                   {R({5}, 43), R({5}, 44)});
  EXPECT_GRADCHECK([](const TensorList& x) { return 2.0 - x[0] * 3.0 + 1.0 / (x[0] + 4.0); }, {R({5}, 45)});
}

}  // namespace
}  // namespace rematch
