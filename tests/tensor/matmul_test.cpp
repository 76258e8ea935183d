// kernels::matmul against hand-computed values and a naive triple loop: 2-D, batched with broadcasting,
// transposed and otherwise non-contiguous views (which exercise the CblasTrans and copy paths), errors.
#include <algorithm>

#include "test_util.h"

namespace rematch {
namespace {

using test::all_close;
using test::random_tensor;
using test::values_equal;

// Reference product in double over the logical (row-major) values, broadcasting a batch of 1 or a 2-D operand.
Tensor naive_matmul(const Tensor& a, const Tensor& b) {
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  const int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  const int64_t ba = a.dim() == 3 ? a.size(0) : 1, bb = b.dim() == 3 ? b.size(0) : 1;
  const int64_t batch = std::max(ba, bb);
  std::vector<double> out(static_cast<size_t>(batch * n * m), 0.0);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += av[(ba == 1 ? 0 : t) * n * k + i * k + p] * bv[(bb == 1 ? 0 : t) * k * m + p * m + j];
        out[t * n * m + i * m + j] = s;
      }
  const Shape shape = (a.dim() == 3 || b.dim() == 3) ? Shape{batch, n, m} : Shape{n, m};
  return kernels::cast(from_vector(out, shape), a.dtype());
}

double tol(DType t) { return t == DType::Float32 ? 1e-4 : 1e-12; }

TEST(Matmul, TwoByTwoHandValues) {
  Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor b = from_vector<float>({5, 6, 7, 8}, {2, 2});
  Tensor y = kernels::matmul(a, b);
  EXPECT_EQ(y.sizes(), (Shape{2, 2}));
  EXPECT_TRUE(values_equal(y, {19, 22, 43, 50}));
}

TEST(Matmul, RectangularMatchesNaiveBothDtypes) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor a = random_tensor({5, 7}, dt, 1), b = random_tensor({7, 3}, dt, 2);
    EXPECT_TRUE(all_close(kernels::matmul(a, b), naive_matmul(a, b), tol(dt), tol(dt)));
  }
}

TEST(Matmul, TransposedViewsEveryCombination) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor a = random_tensor({4, 6}, dt, 3), at = kernels::transpose(random_tensor({6, 4}, dt, 4), 0, 1);
    Tensor b = random_tensor({6, 5}, dt, 5), bt = kernels::transpose(random_tensor({5, 6}, dt, 6), 0, 1);
    ASSERT_FALSE(at.is_contiguous());
    for (const Tensor& x : {a, at})
      for (const Tensor& y : {b, bt})
        EXPECT_TRUE(all_close(kernels::matmul(x, y), naive_matmul(x, y), tol(dt), tol(dt)));
  }
}

TEST(Matmul, RowSlicedViewUsesLeadingDim) {
  // Columns 1..4 of a [3, 8] matrix: row-major with leading dim 8.
  Tensor big = random_tensor({3, 8}, DType::Float64, 7);
  Tensor a = kernels::narrow(big, 1, 1, 4);
  Tensor b = random_tensor({4, 2}, DType::Float64, 8);
  EXPECT_TRUE(all_close(kernels::matmul(a, b), naive_matmul(a, b)));
}

TEST(Matmul, StridedAndExpandedOperandsAreCopied) {
  Tensor a = kernels::slice(random_tensor({3, 10}, DType::Float64, 9), 1, 0, 10, 2);  // column stride 2
  Tensor b = kernels::expand(random_tensor({1, 4}, DType::Float64, 10), {5, 4});      // row stride 0
  EXPECT_TRUE(all_close(kernels::matmul(a, b), naive_matmul(a, b)));
}

TEST(Matmul, SingleRowAndColumnShapes) {
  Tensor a = random_tensor({1, 5}, DType::Float32, 11), b = random_tensor({5, 1}, DType::Float32, 12);
  EXPECT_TRUE(all_close(kernels::matmul(a, b), naive_matmul(a, b), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(kernels::matmul(b, a), naive_matmul(b, a), 1e-5, 1e-5));
}

TEST(Matmul, BatchedSameBatch) {
  Tensor a = random_tensor({3, 4, 5}, DType::Float32, 13), b = random_tensor({3, 5, 2}, DType::Float32, 14);
  Tensor y = kernels::matmul(a, b);
  EXPECT_EQ(y.sizes(), (Shape{3, 4, 2}));
  EXPECT_TRUE(all_close(y, naive_matmul(a, b), 1e-5, 1e-5));
}

TEST(Matmul, BatchedBroadcastTwoDRightFoldsIntoOneGemm) {
  Tensor a = random_tensor({3, 4, 5}, DType::Float64, 15), b = random_tensor({5, 6}, DType::Float64, 16);
  EXPECT_TRUE(all_close(kernels::matmul(a, b), naive_matmul(a, b)));
  // A batch that is not stacked without gaps (sliced rows) takes the per-entry loop instead.
  Tensor gappy = kernels::narrow(random_tensor({3, 6, 5}, DType::Float64, 17), 1, 1, 4);
  EXPECT_TRUE(all_close(kernels::matmul(gappy, b), naive_matmul(gappy, b)));
}

TEST(Matmul, BatchedBroadcastTwoDLeft) {
  Tensor a = random_tensor({4, 5}, DType::Float64, 18), b = random_tensor({3, 5, 2}, DType::Float64, 19);
  Tensor y = kernels::matmul(a, b);
  EXPECT_EQ(y.sizes(), (Shape{3, 4, 2}));
  EXPECT_TRUE(all_close(y, naive_matmul(a, b)));
}

TEST(Matmul, BatchedBroadcastBatchOfOne) {
  Tensor a = random_tensor({1, 4, 5}, DType::Float64, 20), b = random_tensor({3, 5, 2}, DType::Float64, 21);
  EXPECT_TRUE(all_close(kernels::matmul(a, b), naive_matmul(a, b)));
  EXPECT_TRUE(all_close(kernels::matmul(kernels::transpose(b, 1, 2), kernels::transpose(a, 1, 2)),
                        naive_matmul(kernels::transpose(b, 1, 2), kernels::transpose(a, 1, 2))));
}

TEST(Matmul, BatchedTransposedAndPermutedViews) {
  // Transposed last dims (CblasTrans per entry) and a batch dim that is not the outermost in memory.
  Tensor a = kernels::transpose(random_tensor({3, 5, 4}, DType::Float32, 22), 1, 2);
  Tensor b = kernels::permute(random_tensor({5, 3, 2}, DType::Float32, 23), {1, 0, 2});
  ASSERT_FALSE(a.is_contiguous());
  ASSERT_FALSE(b.is_contiguous());
  EXPECT_TRUE(all_close(kernels::matmul(a, b), naive_matmul(a, b), 1e-5, 1e-5));
}

TEST(Matmul, EmptyInnerDimGivesZeros) {
  Tensor y = kernels::matmul(zeros({2, 0}), zeros({0, 3}));
  EXPECT_TRUE(values_equal(y, {0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(kernels::matmul(zeros({0, 4}), zeros({4, 3})).sizes(), (Shape{0, 3}));
}

TEST(Matmul, LargeMatchesNaive) {
  Tensor a = random_tensor({64, 96}, DType::Float32, 24), b = random_tensor({96, 80}, DType::Float32, 25);
  EXPECT_TRUE(all_close(kernels::matmul(a, b), naive_matmul(a, b), 1e-4, 1e-4));
}

TEST(MatmulErrors, InnerDimMismatchNamesBothShapes) {
  EXPECT_THROWS_WITH(kernels::matmul(zeros({2, 3}), zeros({4, 5})), "matmul", "[2, 3]", "[4, 5]");
  EXPECT_THROWS_WITH(kernels::matmul(zeros({6, 2, 3}), zeros({6, 2, 3})), "matmul", "[6, 2, 3]");
}

TEST(MatmulErrors, IntegerDtype) {
  EXPECT_THROWS_WITH(kernels::matmul(zeros({2, 2}, DType::Int64), zeros({2, 2}, DType::Int64)), "matmul",
                     "int64");
}

TEST(MatmulErrors, DtypeMismatch) {
  EXPECT_THROWS_WITH(kernels::matmul(zeros({2, 2}), zeros({2, 2}, DType::Float64)), "matmul", "float32",
                     "float64");
}

TEST(MatmulErrors, WrongNdim) {
  EXPECT_THROWS_WITH(kernels::matmul(zeros({2}), zeros({2, 2})), "matmul", "2-D or 3-D");
  EXPECT_THROWS_WITH(kernels::matmul(zeros({1, 2, 2, 2}), zeros({2, 2})), "matmul", "2-D or 3-D");
}

TEST(MatmulErrors, BatchSizesDoNotBroadcast) {
  EXPECT_THROWS_WITH(kernels::matmul(zeros({2, 3, 4}), zeros({3, 4, 5})), "matmul", "batch", "[2, 3, 4]");
}

TEST(CudaMatmulErrors, MixedDevices) {
  SKIP_WITHOUT_CUDA();
  EXPECT_THROWS_WITH(kernels::matmul(zeros({2, 2}), zeros({2, 2}, DType::Float32, Device::cuda(0))), "matmul",
                     "different devices");
}

}  // namespace
}  // namespace rematch
