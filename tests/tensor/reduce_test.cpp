// Reductions against naive loops: every layout the dispatcher distinguishes (trailing block, middle block,
// scattered dims, all dims, long single row), keepdim on and off, NaN, empty.
#include <climits>
#include <cmath>
#include <cstdint>

#include "test_util.h"

namespace rematch {
namespace {

using test::all_close;
using test::random_tensor;
using test::values_equal;

// Sum over dims by brute force through the flat index.
std::vector<double> naive_sum(const Tensor& x, const std::vector<int64_t>& dims) {
  const Shape& s = x.sizes();
  Shape out_shape = s;
  for (int64_t d : dims) out_shape[d] = 1;
  std::vector<double> out(static_cast<size_t>(shape_numel(out_shape)), 0.0);
  std::vector<double> v = x.to_vector<double>();
  Shape ost = contiguous_strides(out_shape), xst = contiguous_strides(s);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < s.size(); ++d) o += (out_shape[d] == 1 ? 0 : (i / xst[d]) % s[d]) * ost[d];
    out[o] += v[i];
  }
  return out;
}

TEST(Reduce, SumOverEveryLayout) {
  Tensor x = random_tensor({3, 4, 5, 6}, DType::Float64, 1);
  for (std::vector<int64_t> dims : std::vector<std::vector<int64_t>>{{3}, {2, 3}, {1, 2}, {0}, {0, 2}, {1, 3}, {0, 1, 2, 3}}) {
    EXPECT_TRUE(values_equal(kernels::reduce(kernels::ReduceOp::Sum, x, dims, false), naive_sum(x, dims), 1e-12));
    Tensor kept = kernels::reduce(kernels::ReduceOp::Sum, x, dims, true);
    EXPECT_EQ(kept.dim(), 4);
  }
  EXPECT_TRUE(values_equal(sum(x), naive_sum(x, {0, 1, 2, 3}), 1e-12));
}

TEST(Reduce, NonContiguousInput) {
  Tensor x = random_tensor({6, 7}, DType::Float64, 2);
  Tensor t = kernels::transpose(x, 0, 1);
  EXPECT_TRUE(all_close(sum(t, {1}), sum(x, {0}), 1e-12, 0));
  EXPECT_TRUE(all_close(mean(t, {0}, true), kernels::transpose(mean(x, {1}, true), 0, 1), 1e-12, 0));
}

TEST(Reduce, MaxMinAndIndices) {
  Tensor x = from_vector<double>({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}, {3, 4});
  EXPECT_TRUE(values_equal(amax(x, {1}), {4, 9, 8}));
  EXPECT_TRUE(values_equal(amin(x, {0}), {3, 1, 2, 1}));
  auto [v, i] = max(x, 1);
  EXPECT_TRUE(values_equal(v, {4, 9, 8}));
  EXPECT_TRUE(values_equal(i, {2, 1, 3}));
  auto [mv, mi] = min(x, 0, true);
  EXPECT_EQ(mv.sizes(), (Shape{1, 4}));
  EXPECT_TRUE(values_equal(mi, {0, 0, 1, 0}));
  EXPECT_TRUE(values_equal(argmax(x, 0), {1, 1, 2, 2}));  // ties: the first occurrence
  EXPECT_TRUE(values_equal(argmin(x, -1), {1, 2, 1}));
  EXPECT_TRUE(values_equal(amax(x), {9}));
}

TEST(Reduce, IndicesAlongMiddleDimOf3d) {
  Tensor x = test::random_tensor({3, 4, 5}, DType::Float64, 9);
  auto [v, i] = max(x, 1);
  std::vector<double> xv = x.to_vector<double>(), vv = v.to_vector<double>();
  std::vector<int64_t> iv = i.to_vector<int64_t>();
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t c = 0; c < 5; ++c) {
      int64_t best = 0;
      for (int64_t b = 1; b < 4; ++b)
        if (xv[a * 20 + b * 5 + c] > xv[a * 20 + best * 5 + c]) best = b;
      EXPECT_EQ(iv[a * 5 + c], best);
      EXPECT_EQ(vv[a * 5 + c], xv[a * 20 + best * 5 + c]);
    }
}

TEST(Reduce, NaNPropagatesThroughMaxAndMin) {
  Tensor x = from_vector<double>({1, NAN, 3, 4}, {2, 2});
  EXPECT_TRUE(std::isnan(amax(x).item<double>()));
  EXPECT_TRUE(values_equal(argmax(x, 1), {1, 1}));
}

TEST(Reduce, LongRowSplitAcrossThreads) {
  Tensor x = random_tensor({1 << 20}, DType::Float32, 3, 0, 1);
  double want = 0;
  for (float v : x.to_vector<float>()) want += v;
  EXPECT_NEAR(sum(x).item<double>(), want, 1e-6 * want);
  EXPECT_NEAR(mean(x).item<double>(), want / (1 << 20), 1e-6);
}

TEST(Reduce, LogsumexpVarNorm) {
  Tensor x = from_vector<double>({1, 2, 3, -INFINITY, -INFINITY, -INFINITY}, {2, 3});
  std::vector<double> l = logsumexp(x, {1}).to_vector<double>();
  EXPECT_NEAR(l[0], std::log(std::exp(1) + std::exp(2) + std::exp(3)), 1e-12);
  EXPECT_TRUE(std::isinf(l[1]) && l[1] < 0);
  Tensor y = from_vector<double>({1, 2, 3, 4});
  EXPECT_NEAR(var(y).item<double>(), 5.0 / 3, 1e-12);
  EXPECT_NEAR(var(y, {}, 0).item<double>(), 1.25, 1e-12);
  EXPECT_NEAR(norm(y, 2).item<double>(), std::sqrt(30.0), 1e-12);
  EXPECT_NEAR(norm(y, 1).item<double>(), 10, 1e-12);
  Tensor z = from_vector<double>({3, 4, 0, 0}, {2, 2});
  EXPECT_TRUE(values_equal(norm(z, 2, {1}), {5, 0}, 1e-12));
}

TEST(Reduce, IntegerSumAndEmpty) {
  EXPECT_EQ(sum(from_vector<int32_t>({1, 2, 3})).item<int64_t>(), 6);
  EXPECT_EQ(sum(zeros({0, 3}), {0}).sizes(), (Shape{3}));
  EXPECT_TRUE(values_equal(sum(zeros({0, 3}), {0}), {0, 0, 0}));
  EXPECT_THROWS_WITH(amax(zeros({0, 3}), {0}), "max", "zero elements");
  EXPECT_THROWS_WITH(mean(from_vector<int32_t>({1})), "mean", "int32");
}

TEST(Reduce, IntegerSumsAreExactAndWrapLikeCuda) {
  // 40000 x (2^44 + 1) ≈ 7e17: past double's 2^53, so a sum through double loses the low bits. The long single
  // row (split over threads) and the middle-block layout [R, 2] must both be exact.
  const int64_t big = (int64_t{1} << 44) + 1, n = 40000;
  const Tensor row = full({n}, static_cast<double>(big), DType::Int64);
  ASSERT_EQ(row.to_vector<int64_t>()[0], big);
  EXPECT_EQ(sum(row).item<int64_t>(), n * big);
  const Tensor cols = full({n, 2}, static_cast<double>(big), DType::Int64);
  EXPECT_EQ(sum(cols, {0}).to_vector<int64_t>(), (std::vector<int64_t>{n * big, n * big}));
  // int32 sums keep int32 and wrap modulo 2^32: 70 x 2^30 = 2^31 (mod 2^32) = INT32_MIN, in both layouts.
  const Tensor small = full({70, 3}, static_cast<double>(1 << 30), DType::Int32);
  EXPECT_EQ(sum(small, {0}).to_vector<int32_t>(), (std::vector<int32_t>(3, INT32_MIN)));
  EXPECT_EQ(sum(full({3, 70}, static_cast<double>(1 << 30), DType::Int32), {1}).to_vector<int32_t>(),
            (std::vector<int32_t>(3, INT32_MIN)));
}

}  // namespace
}  // namespace rematch
