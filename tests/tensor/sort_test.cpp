// kernels::sort and kernels::topk: hand-checked orders (stability, NaN as the largest value), agreement with
// std::stable_sort on random lanes along every dim, non-contiguous inputs, integer dtypes, errors.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;
using test::values_equal;

// Stable sort of each lane along dim (NaN last ascending, first descending): values and indices in double.
std::pair<Tensor, Tensor> naive_sort(const Tensor& x, int64_t dim, bool descending, int64_t k) {
  const std::vector<double> v = kernels::contiguous(x).to_vector<double>();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.size(d);
    if (d > dim) inner *= x.size(d);
  }
  const int64_t n = x.size(dim);
  Shape shape = x.sizes();
  shape[dim] = k;
  std::vector<double> vals(static_cast<size_t>(outer * k * inner)), idx(vals.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      auto at = [&](int64_t j) { return v[(o * n + j) * inner + i]; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const double va = at(a), vb = at(b);
        if (std::isnan(va) || std::isnan(vb)) return descending ? !std::isnan(vb) : !std::isnan(va) && std::isnan(vb);
        return descending ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        vals[(o * k + j) * inner + i] = at(order[j]);
        idx[(o * k + j) * inner + i] = static_cast<double>(order[j]);
      }
    }
  return {from_vector(vals, shape), from_vector(idx, shape)};
}

::testing::AssertionResult same_sort(const std::pair<Tensor, Tensor>& got, const std::pair<Tensor, Tensor>& want) {
  if (got.second.dtype() != DType::Int64) return ::testing::AssertionFailure() << "indices are not int64";
  if (got.first.sizes() != want.first.sizes())
    return ::testing::AssertionFailure() << "shape " << got.first.shape_str() << " vs " << want.first.shape_str();
  ::testing::AssertionResult r = values_equal(got.first, want.first.to_vector<double>());
  return r ? values_equal(got.second, want.second.to_vector<double>()) : r;
}

TEST(Sort, AscendingAndDescendingHandValues) {
  Tensor x = from_vector<float>({3, 1, 2});
  auto [v, i] = kernels::sort(x, 0, false);
  EXPECT_TRUE(values_equal(v, {1, 2, 3}));
  EXPECT_TRUE(values_equal(i, {1, 2, 0}));
  auto [vd, id] = kernels::sort(x, -1, true);
  EXPECT_TRUE(values_equal(vd, {3, 2, 1}));
  EXPECT_TRUE(values_equal(id, {0, 2, 1}));
}

TEST(Sort, StableOnTiesBothDirections) {
  Tensor x = from_vector<double>({2, 1, 2, 1});
  auto asc = kernels::sort(x, 0, false);
  EXPECT_TRUE(values_equal(asc.second, {1, 3, 0, 2}));
  auto desc = kernels::sort(x, 0, true);
  EXPECT_TRUE(values_equal(desc.second, {0, 2, 1, 3}));
}

TEST(Sort, NaNSortsAsLargest) {
  Tensor x = from_vector<double>({NAN, 1, -INFINITY, 3, NAN});
  auto asc = kernels::sort(x, 0, false);
  EXPECT_TRUE(values_equal(asc.first, {-INFINITY, 1, 3, NAN, NAN}));
  EXPECT_TRUE(values_equal(asc.second, {2, 1, 3, 0, 4}));
  auto desc = kernels::sort(x, 0, true);
  EXPECT_TRUE(values_equal(desc.first, {NAN, NAN, 3, 1, -INFINITY}));
  EXPECT_TRUE(values_equal(desc.second, {0, 4, 3, 1, 2}));
}

TEST(Sort, MatchesStableSortAlongEveryDim) {
  // Values on a coarse grid so that ties are common; the last shape is large enough to run threaded.
  for (const Shape& shape : {Shape{4, 5, 6}, Shape{200, 300}})
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      for (bool desc : {false, true}) {
        Tensor x = kernels::cast(random_tensor(shape, DType::Int64, 1, 0, 8), DType::Float32);
        EXPECT_TRUE(same_sort(kernels::sort(x, d, desc), naive_sort(x, d, desc, shape[d])))
            << shape_str(shape) << " dim " << d << (desc ? " descending" : " ascending");
      }
}

TEST(Sort, TransposedInput) {
  Tensor x = kernels::transpose(random_tensor({5, 7}, DType::Float64, 2), 0, 1);
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_TRUE(same_sort(kernels::sort(x, 1, false), naive_sort(x, 1, false, 5)));
  EXPECT_TRUE(same_sort(kernels::sort(x, 0, true), naive_sort(x, 0, true, 7)));
}

TEST(Sort, IntegerValues) {
  Tensor x = from_vector<int64_t>({5, -2, 5, 0});
  auto [v, i] = kernels::sort(x, 0, false);
  EXPECT_EQ(v.dtype(), DType::Int64);
  EXPECT_TRUE(values_equal(v, {-2, 0, 5, 5}));
  EXPECT_TRUE(values_equal(i, {1, 3, 0, 2}));
}

TEST(Sort, ZeroDimAndEmpty) {
  auto [v, i] = kernels::sort(scalar_tensor(4.0), 0, false);
  EXPECT_EQ(v.dim(), 0);
  EXPECT_TRUE(values_equal(v, {4}));
  EXPECT_TRUE(values_equal(i, {0}));
  EXPECT_TRUE(values_equal(kernels::topk(scalar_tensor(4.0), 0, 0, true).first, {4}));  // as PyTorch
  EXPECT_EQ(kernels::sort(zeros({3, 0}), 1, false).first.sizes(), (Shape{3, 0}));
}

TEST(Topk, LargestAndSmallestHandValues) {
  Tensor x = from_vector<float>({4, 9, 1, 9, 7}, {1, 5});
  auto [v, i] = kernels::topk(x, 3, 1, true);
  EXPECT_EQ(v.sizes(), (Shape{1, 3}));
  EXPECT_TRUE(values_equal(v, {9, 9, 7}));
  EXPECT_TRUE(values_equal(i, {1, 3, 4}));  // ties: the lower index first
  auto [vs, is] = kernels::topk(x, 2, -1, false);
  EXPECT_TRUE(values_equal(vs, {1, 4}));
  EXPECT_TRUE(values_equal(is, {2, 0}));
}

TEST(Topk, NaNCountsAsLargest) {
  auto [v, i] = kernels::topk(from_vector<double>({1, NAN, 3}), 2, 0, true);
  EXPECT_TRUE(values_equal(v, {NAN, 3}));
  EXPECT_TRUE(values_equal(i, {1, 2}));
}

TEST(Topk, MatchesPrefixOfStableSort) {
  // The second shape is large enough to run threaded.
  for (const Shape& shape : {Shape{6, 9, 4}, Shape{100, 400}}) {
    Tensor x = kernels::cast(random_tensor(shape, DType::Int64, 3, 0, 6), DType::Float32);
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      for (bool largest : {false, true}) {
        const auto full = naive_sort(x, d, largest, shape[d]);
        for (int64_t k : {int64_t{0}, int64_t{1}, shape[d] / 2, shape[d]}) {
          const std::pair<Tensor, Tensor> want{kernels::narrow(full.first, d, 0, k),
                                               kernels::narrow(full.second, d, 0, k)};
          EXPECT_TRUE(same_sort(kernels::topk(x, k, d, largest), want))
              << shape_str(shape) << " dim " << d << " k " << k;
        }
      }
  }
}

TEST(TopkErrors, KOutOfRangeNamesKAndDimSize) {
  EXPECT_THROWS_WITH(kernels::topk(zeros({2, 3}), 5, 1, true), "topk", "k = 5", "size 3");
  EXPECT_THROWS_WITH(kernels::topk(zeros({2, 3}), -1, 0, true), "topk", "k = -1", "size 2");
}

TEST(SortErrors, BadDimAndBoolDtype) {
  EXPECT_THROWS_WITH(kernels::sort(zeros({2, 3}), 2, false), "sort", "dim 2");
  EXPECT_THROWS_WITH(kernels::sort(zeros({2}, DType::Bool), 0, false), "sort", "bool");
}

}  // namespace
}  // namespace rematch
