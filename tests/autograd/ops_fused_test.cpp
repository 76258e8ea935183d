// Gradient checks (float64) of softmax, log_softmax, l2_normalize and l1_normalize over the last dim and dim 0
// (the two kernel paths), middle dims, transposed inputs and non-contiguous incoming gradients.
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;

Tensor rnd(const Shape& s, uint32_t seed) { return random_tensor(s, DType::Float64, seed, -2, 2); }

TEST(OpsFused, ForwardMatchesKernels) {
  Tensor x = rnd({3, 4}, 1);
  EXPECT_TRUE(test::all_close(softmax(x, 1), kernels::softmax(x, 1)));
  EXPECT_TRUE(test::all_close(log_softmax(x, 0), kernels::log_softmax(x, 0)));
  EXPECT_TRUE(test::all_close(l2_normalize(x, 1), kernels::lp_normalize(x, 1, 2, 1e-8)));
  EXPECT_TRUE(test::all_close(l1_normalize(x, 0, 0.5), kernels::lp_normalize(x, 0, 1, 0.5)));
}

TEST(OpsFusedGrad, SoftmaxLastDim) {
  EXPECT_GRADCHECK([](const TensorList& x) { return softmax(x[0], -1); }, {rnd({3, 5}, 2)});
}

TEST(OpsFusedGrad, SoftmaxDim0) {
  EXPECT_GRADCHECK([](const TensorList& x) { return softmax(x[0], 0); }, {rnd({4, 3}, 3)});
}

TEST(OpsFusedGrad, SoftmaxMiddleDim3D) {
  EXPECT_GRADCHECK([](const TensorList& x) { return softmax(x[0], 1); }, {rnd({2, 3, 4}, 4)});
}

TEST(OpsFusedGrad, SoftmaxTransposedInputAndGradient) {
  EXPECT_GRADCHECK([](const TensorList& x) { return softmax(transpose(x[0], 0, 1), 1); }, {rnd({4, 3}, 5)});
  EXPECT_GRADCHECK([](const TensorList& x) { return transpose(softmax(x[0], 1), 0, 1); }, {rnd({3, 4}, 6)});
}

TEST(OpsFusedGrad, LogSoftmaxLastDim) {
  EXPECT_GRADCHECK([](const TensorList& x) { return log_softmax(x[0], -1); }, {rnd({3, 5}, 7)});
}

TEST(OpsFusedGrad, LogSoftmaxDim0) {
  EXPECT_GRADCHECK([](const TensorList& x) { return log_softmax(x[0], 0); }, {rnd({4, 3}, 8)});
}

TEST(OpsFusedGrad, LogSoftmaxTransposedInput) {
  EXPECT_GRADCHECK([](const TensorList& x) { return log_softmax(transpose(x[0], 0, 2), 1); }, {rnd({2, 3, 4}, 9)});
}

TEST(OpsFusedGrad, L2NormalizeLastDim) {
  EXPECT_GRADCHECK([](const TensorList& x) { return l2_normalize(x[0], -1); }, {rnd({3, 4}, 10)});
}

TEST(OpsFusedGrad, L2NormalizeDim0) {
  EXPECT_GRADCHECK([](const TensorList& x) { return l2_normalize(x[0], 0, 1e-3); }, {rnd({4, 3}, 11)});
}

TEST(OpsFusedGrad, L2NormalizeKeepDimsSingleton) {
  // Features kept as [B, 1, D]: normalising over D, and over the singleton dim itself (x / (|x| + eps)).
  EXPECT_GRADCHECK([](const TensorList& x) { return l2_normalize(x[0], 2); }, {rnd({3, 1, 4}, 12)});
  EXPECT_GRADCHECK([](const TensorList& x) { return l2_normalize(x[0], 1, 0.1); }, {rnd({3, 1, 4}, 13)});
}

TEST(OpsFusedGrad, L2NormalizeTransposedInput) {
  EXPECT_GRADCHECK([](const TensorList& x) { return l2_normalize(transpose(x[0], 0, 1), 1); }, {rnd({5, 3}, 14)});
}

TEST(OpsFusedGrad, L2NormalizeZeroRowHasFiniteGradient) {
  // At a zero row only g / d remains; with eps = 1 the central difference sees the same slope.
  Tensor x = from_vector<double>({0, 0, 0, 1, -2, 0.5}, {2, 3});
  EXPECT_GRADCHECK([](const TensorList& t) { return l2_normalize(t[0], 1, 1.0); }, {x});
  Tensor leaf = kernels::clone(x).requires_grad_(true);
  backward(sum(l2_normalize(leaf, 1)));
  EXPECT_TRUE(test::all_close(kernels::narrow(leaf.grad(), 0, 0, 1), full({1, 3}, 1e8, DType::Float64)));
}

TEST(OpsFusedGrad, L1NormalizeLastDim) {
  EXPECT_GRADCHECK([](const TensorList& x) { return l1_normalize(x[0], -1); }, {rnd({3, 4}, 15)});
}

TEST(OpsFusedGrad, L1NormalizeDim0AndTransposed) {
  EXPECT_GRADCHECK([](const TensorList& x) { return l1_normalize(x[0], 0, 1e-2); }, {rnd({4, 3}, 16)});
  EXPECT_GRADCHECK([](const TensorList& x) { return l1_normalize(transpose(x[0], 0, 1), 1); }, {rnd({4, 3}, 17)});
}

}  // namespace
}  // namespace rematch
