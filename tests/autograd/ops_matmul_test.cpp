// Gradient checks (float64, central differences) of matmul in every operand-rank combination, with
// broadcast batch dims and transposed (non-contiguous) operands, and of bmm; plus result shapes and errors.
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;

Tensor rnd(const Shape& s, uint32_t seed) { return random_tensor(s, DType::Float64, seed); }

TEST(OpsMatmul, VectorOperandShapes) {
  EXPECT_EQ(matmul(rnd({4}, 1), rnd({4}, 2)).dim(), 0);
  EXPECT_EQ(matmul(rnd({4}, 1), rnd({4, 3}, 2)).sizes(), (Shape{3}));
  EXPECT_EQ(matmul(rnd({2, 4}, 1), rnd({4}, 2)).sizes(), (Shape{2}));
  EXPECT_EQ(matmul(rnd({4}, 1), rnd({5, 4, 3}, 2)).sizes(), (Shape{5, 3}));
  EXPECT_EQ(matmul(rnd({5, 2, 4}, 1), rnd({4}, 2)).sizes(), (Shape{5, 2}));
}

TEST(OpsMatmul, DotValue) {
  Tensor y = matmul(from_vector<double>({1, 2, 3}), from_vector<double>({4, 5, 6}));
  EXPECT_DOUBLE_EQ(y.item<double>(), 32.0);
}

TEST(OpsMatmulGrad, Dot) {
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({5}, 1), rnd({5}, 2)});
}

TEST(OpsMatmulGrad, MatrixMatrix) {
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({3, 4}, 3), rnd({4, 2}, 4)});
}

TEST(OpsMatmulGrad, VectorMatrixAndMatrixVector) {
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({4}, 5), rnd({4, 3}, 6)});
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({3, 4}, 7), rnd({4}, 8)});
}

TEST(OpsMatmulGrad, VectorWithBatch) {
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({3}, 9), rnd({2, 3, 4}, 10)});
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({2, 4, 3}, 11), rnd({3}, 12)});
}

TEST(OpsMatmulGrad, BatchedSameBatch) {
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({2, 3, 4}, 13), rnd({2, 4, 2}, 14)});
}

TEST(OpsMatmulGrad, BatchedBroadcastTwoDLeft) {
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({3, 4}, 15), rnd({2, 4, 2}, 16)});
}

TEST(OpsMatmulGrad, BatchedBroadcastTwoDRight) {
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({2, 3, 4}, 17), rnd({4, 2}, 18)});
}

TEST(OpsMatmulGrad, BatchedBroadcastBatchOfOne) {
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({1, 3, 4}, 19), rnd({3, 4, 2}, 20)});
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(x[0], x[1]); }, {rnd({3, 3, 4}, 21), rnd({1, 4, 2}, 22)});
}

TEST(OpsMatmulGrad, TransposedInputs) {
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(transpose(x[0], 0, 1), transpose(x[1], 0, 1)); },
                   {rnd({4, 3}, 23), rnd({2, 4}, 24)});
  EXPECT_GRADCHECK([](const TensorList& x) { return matmul(transpose(x[0], 1, 2), x[1]); },
                   {rnd({2, 4, 3}, 25), rnd({4, 2}, 26)});
}

TEST(OpsMatmulGrad, NonContiguousOutputGradient) {
  // The transpose after matmul hands the backward a transposed (non-contiguous) gradient.
  EXPECT_GRADCHECK([](const TensorList& x) { return transpose(matmul(x[0], x[1]), -1, -2); },
                   {rnd({2, 3, 4}, 27), rnd({4, 5}, 28)});
}

TEST(OpsMatmulGrad, OnlyOneOperandRequiresGrad) {
  Tensor w = rnd({4, 2}, 29);
  EXPECT_GRADCHECK([w](const TensorList& x) { return matmul(x[0], w); }, {rnd({3, 4}, 30)});
}

TEST(OpsMatmulErrors, RankAndInnerDim) {
  EXPECT_THROWS_WITH(matmul(rnd({1, 2, 3, 4}, 1), rnd({4, 2}, 2)), "matmul", "1-D to 3-D");
  EXPECT_THROWS_WITH(matmul(rnd({3}, 1), rnd({4}, 2)), "matmul", "[1, 3]", "[4, 1]");
}

TEST(OpsBmmGrad, SameBatch) {
  EXPECT_GRADCHECK([](const TensorList& x) { return bmm(x[0], x[1]); }, {rnd({3, 2, 4}, 31), rnd({3, 4, 3}, 32)});
}

TEST(OpsBmmGrad, TransposedInputs) {
  EXPECT_GRADCHECK([](const TensorList& x) { return bmm(transpose(x[0], 1, 2), transpose(x[1], 1, 2)); },
                   {rnd({2, 4, 3}, 33), rnd({2, 5, 4}, 34)});
}

TEST(OpsBmmErrors, StrictShapes) {
  EXPECT_THROWS_WITH(bmm(rnd({3, 4}, 1), rnd({4, 2}, 2)), "bmm", "3-D");
  EXPECT_THROWS_WITH(bmm(rnd({1, 3, 4}, 1), rnd({2, 4, 2}, 2)), "bmm", "batch sizes differ");
}

}  // namespace
}  // namespace rematch
