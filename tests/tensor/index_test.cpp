// kernels:: shape and index family (tensor/index.cpp, tensor/cpu/index.cpp): values against hand-computed
// expectations, strided inputs, repeated indices, determinism of the scatters, and the error messages.
#include <vector>

#include "test_util.h"

namespace rematch {
namespace {

using test::values_equal;

Tensor dvec(const std::vector<double>& v, const Shape& shape) { return from_vector(v, shape); }
// Shape defaults to [n], also for one value (from_vector would make that 0-d).
Tensor ivec(const std::vector<int64_t>& v, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return from_vector(v, shape);
}

// [[0, 1, 2], [3, 4, 5]]
Tensor x23() { return dvec({0, 1, 2, 3, 4, 5}, {2, 3}); }

// ---- cat ----------------------------------------------------------------------------------------------------
TEST(IndexCat, AlongEachDim) {
  Tensor a = x23(), b = dvec({6, 7, 8}, {1, 3});
  Tensor c0 = kernels::cat({a, b}, 0);
  EXPECT_EQ(c0.sizes(), (Shape{3, 3}));
  EXPECT_TRUE(values_equal(c0, {0, 1, 2, 3, 4, 5, 6, 7, 8}));
  Tensor c1 = kernels::cat({a, dvec({9, 10}, {2, 1}), a}, -1);
  EXPECT_EQ(c1.sizes(), (Shape{2, 7}));
  EXPECT_TRUE(values_equal(c1, {0, 1, 2, 9, 0, 1, 2, 3, 4, 5, 10, 3, 4, 5}));
}

TEST(IndexCat, NonContiguousAndEmptyPieces) {
  Tensor t = kernels::transpose(x23(), 0, 1);  // [[0, 3], [1, 4], [2, 5]]
  Tensor e = empty({3, 0}, DType::Float64);
  Tensor c = kernels::cat({t, e, kernels::slice(t, 1, 1, 2)}, 1);
  EXPECT_EQ(c.sizes(), (Shape{3, 3}));
  EXPECT_TRUE(values_equal(c, {0, 3, 3, 1, 4, 4, 2, 5, 5}));
}

TEST(IndexCat, Errors) {
  EXPECT_THROWS_WITH(kernels::cat({}, 0), "cat", "non-empty");
  EXPECT_THROWS_WITH(kernels::cat({x23(), dvec({1, 2}, {1, 2})}, 0), "cat", "tensor 1", "[1, 2]", "[2, 3]");
  EXPECT_THROWS_WITH(kernels::cat({x23(), dvec({1, 2, 3}, {3})}, 0), "cat", "[3]", "[2, 3]");
  EXPECT_THROWS_WITH(kernels::cat({x23(), kernels::cast(x23(), DType::Float32)}, 0), "cat", "float32",
                     "float64");
  EXPECT_THROWS_WITH(kernels::cat({scalar_tensor(1)}, 0), "cat", "0-d");
  EXPECT_THROWS_WITH(kernels::cat({x23()}, 2), "cat", "dim 2");
}

// ---- index_select -------------------------------------------------------------------------------------------
TEST(IndexSelect, RowsAndColumnsWithRepeats) {
  Tensor r = kernels::index_select(x23(), 0, ivec({1, 1, 0}));
  EXPECT_EQ(r.sizes(), (Shape{3, 3}));
  EXPECT_TRUE(values_equal(r, {3, 4, 5, 3, 4, 5, 0, 1, 2}));
  Tensor c = kernels::index_select(x23(), 1, kernels::cast(ivec({2, 0, 2, 2}), DType::Int32));
  EXPECT_EQ(c.sizes(), (Shape{2, 4}));
  EXPECT_TRUE(values_equal(c, {2, 0, 2, 2, 5, 3, 5, 5}));
}

TEST(IndexSelect, NonContiguousInputAndIndex) {
  Tensor t = kernels::transpose(x23(), 0, 1);                          // [[0, 3], [1, 4], [2, 5]]
  Tensor idx = kernels::slice(ivec({2, 9, 0, 9, 2}), 0, 0, 5, 2);    // [2, 0, 2], stride 2
  Tensor r = kernels::index_select(t, 0, idx);
  EXPECT_TRUE(values_equal(r, {2, 5, 0, 3, 2, 5}));
  Tensor c = kernels::index_select(t, 1, ivec({1}));
  EXPECT_EQ(c.sizes(), (Shape{3, 1}));
  EXPECT_TRUE(values_equal(c, {3, 4, 5}));
}

TEST(IndexSelect, ThreeDimsMiddleAndBoolValues) {
  Tensor x = kernels::reshape(arange(24, DType::Float32), {2, 3, 4});
  Tensor r = kernels::index_select(x, 1, ivec({2, 0}));
  EXPECT_EQ(r.sizes(), (Shape{2, 2, 4}));
  EXPECT_TRUE(values_equal(r, {8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 12, 13, 14, 15}));
  Tensor m = from_vector<bool>({true, false, true}, {3});
  EXPECT_TRUE(values_equal(kernels::index_select(m, 0, ivec({1, 2})), {0, 1}));
}

TEST(IndexSelect, PermutedInputMatchesContiguousCopy) {
  // After the permute the dims behind dim 0 ([4, 2] with strides 1, 12) are not one run: the table path.
  Tensor x = kernels::permute(kernels::reshape(arange(24, DType::Float64), {2, 3, 4}), {1, 2, 0});
  Tensor idx = ivec({2, 0, 2});
  EXPECT_TRUE(test::all_close(kernels::index_select(x, 0, idx), kernels::index_select(kernels::clone(x), 0, idx)));
  EXPECT_TRUE(values_equal(kernels::index_select(x, 0, ivec({1})), {4, 16, 5, 17, 6, 18, 7, 19}));
}

TEST(IndexSelect, Errors) {
  EXPECT_THROWS_WITH(kernels::index_select(x23(), 0, ivec({0, 2})), "index_select", "index 2", "dim 0",
                     "size 2");
  EXPECT_THROWS_WITH(kernels::index_select(x23(), 1, ivec({-1})), "index_select", "index -1", "size 3");
  EXPECT_THROWS_WITH(kernels::index_select(x23(), 0, dvec({0, 1}, {2})), "index_select",
                     "index must be int32 or int64", "float64");
  EXPECT_THROWS_WITH(kernels::index_select(x23(), 0, ivec({0, 1}, {1, 2})), "index_select", "1-d");
  EXPECT_THROWS_WITH(kernels::index_select(x23(), 3, ivec({0})), "index_select", "dim 3");
}

// ---- gather ----------------------------------------------------------------------------------------------------
TEST(IndexGather, AlongDim1AndDim0) {
  Tensor g1 = kernels::gather(x23(), 1, ivec({2, 0, 0, 1, 1, 1}, {2, 3}));
  EXPECT_TRUE(values_equal(g1, {2, 0, 0, 4, 4, 4}));
  Tensor g0 = kernels::gather(x23(), 0, ivec({1, 0, 1}, {1, 3}));
  EXPECT_EQ(g0.sizes(), (Shape{1, 3}));
  EXPECT_TRUE(values_equal(g0, {3, 1, 5}));
}

TEST(IndexGather, IndexSmallerThanInputAndNonContiguous) {
  Tensor x = kernels::reshape(arange(24, DType::Float64), {2, 3, 4});
  Tensor xt = kernels::transpose(x, 0, 2);  // [4, 3, 2], xt[i][j][k] = x[k][j][i]
  // Index [2, 2, 1] along dim 1: out[i][j][0] = xt[i][idx][0] = x[0][idx][i].
  Tensor idx = ivec({2, 0, 1, 1}, {2, 2, 1});
  Tensor g = kernels::gather(xt, 1, idx);
  EXPECT_EQ(g.sizes(), (Shape{2, 2, 1}));
  EXPECT_TRUE(values_equal(g, {8, 0, 5, 5}));
  Tensor it = kernels::transpose(ivec({0, 1, 2, 2, 1, 0}, {3, 2}), 0, 1);  // [[0, 2, 1], [1, 2, 0]]
  EXPECT_TRUE(values_equal(kernels::gather(x23(), 1, it), {0, 2, 1, 4, 5, 3}));
}

TEST(IndexGather, AndScatterAddMatchNaiveLoopsOnPartialInnerDims) {
  // Index [2, 2, 3, 4] against x [2, 3, 4, 5] along dim 1: the inner dims [3, 4] of a [4, 5] block are not one
  // arithmetic run, so the kernels go through their offset tables.
  Tensor x = kernels::reshape(arange(120, DType::Float64), {2, 3, 4, 5});
  Tensor idx = test::random_index({2, 2, 3, 4}, 3, 9);
  Tensor src = test::random_tensor({2, 2, 3, 4}, DType::Float64, 10);
  std::vector<double> xv = x.to_vector<double>(), sv = src.to_vector<double>();
  std::vector<int64_t> iv = idx.to_vector<int64_t>();
  std::vector<double> gathered(iv.size()), scattered = xv;
  for (int64_t a = 0, e = 0; a < 2; ++a)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t d = 0; d < 4; ++d, ++e) {
          const int64_t at = ((a * 3 + iv[e]) * 4 + c) * 5 + d;
          gathered[e] = xv[at];
          scattered[at] += sv[e];
        }
  EXPECT_TRUE(values_equal(kernels::gather(x, 1, idx), gathered));
  EXPECT_TRUE(values_equal(kernels::scatter_add(x, 1, idx, src), scattered, 1e-12));
}

TEST(IndexGather, Errors) {
  EXPECT_THROWS_WITH(kernels::gather(x23(), 1, ivec({0, 3}, {1, 2})), "gather", "index 3", "dim 1", "size 3");
  EXPECT_THROWS_WITH(kernels::gather(x23(), 1, kernels::cast(ivec({0}, {1, 1}), DType::Float32)), "gather",
                     "index must be int32 or int64, got float32");
  EXPECT_THROWS_WITH(kernels::gather(x23(), 1, ivec({0, 1}, {2})), "gather", "same number of dims");
  EXPECT_THROWS_WITH(kernels::gather(x23(), 1, ivec({0, 0, 0}, {3, 1})), "gather", "larger", "dim 0");
}

// ---- scatter_add -------------------------------------------------------------------------------------------
TEST(IndexScatterAdd, RepeatedIndicesAccumulate) {
  Tensor x = dvec({1, 1, 1, 1, 1, 1}, {2, 3});
  Tensor src = dvec({10, 20, 30, 40, 50, 60}, {2, 3});
  Tensor r = kernels::scatter_add(x, 1, ivec({0, 0, 2, 1, 1, 1}, {2, 3}), src);
  EXPECT_TRUE(values_equal(r, {31, 1, 31, 1, 151, 1}));
  Tensor r0 = kernels::scatter_add(x, 0, ivec({1, 1, 1, 1, 0, 1}, {2, 3}), src);
  EXPECT_TRUE(values_equal(r0, {1, 51, 1, 51, 21, 91}));
  EXPECT_TRUE(values_equal(x, {1, 1, 1, 1, 1, 1}));  // the input is untouched
}

TEST(IndexScatterAdd, SrcLargerThanIndexAndNonContiguous) {
  Tensor x = kernels::transpose(zeros({3, 2}, DType::Float64), 0, 1);  // [2, 3] view
  Tensor src = kernels::transpose(dvec({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}), 0, 1);  // [[1,3,5,7],[2,4,6,8]]
  Tensor r = kernels::scatter_add(x, 1, ivec({2, 2, 0}, {1, 3}), src);
  EXPECT_TRUE(values_equal(r, {5, 0, 4, 0, 0, 0}));
}

TEST(IndexScatterAdd, DeterministicAndSequentialOnLargeInputs) {
  // Many collisions over a size that takes the parallel path: the float32 sums must equal a sequential
  // accumulation in increasing j exactly, on every run.
  const int64_t rows = 64, cols = 2048, bins = 7;
  Tensor src = kernels::cast(test::random_tensor({rows, cols}, DType::Float64, 3), DType::Float32);
  Tensor idx = test::random_index({rows, cols}, bins, 4);
  Tensor x = zeros({rows, bins}, DType::Float32);
  std::vector<float> want(rows * bins, 0.0f);
  std::vector<float> s = src.to_vector<float>();
  std::vector<int64_t> id = idx.to_vector<int64_t>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) want[r * bins + id[r * cols + j]] += s[r * cols + j];
  Tensor a = kernels::scatter_add(x, 1, idx, src);
  Tensor b = kernels::scatter_add(x, 1, idx, src);
  EXPECT_EQ(a.to_vector<float>(), want);
  EXPECT_EQ(b.to_vector<float>(), want);
  // Along dim 0 a single outer row: the work is split over columns instead.
  const int64_t wide = 256;
  Tensor idx0 = test::random_index({cols, wide}, bins, 5);
  Tensor src0 = kernels::cast(test::random_tensor({cols, wide}, DType::Float64, 6), DType::Float32);
  std::vector<float> want0(bins * wide, 0.0f);
  std::vector<float> s0 = src0.to_vector<float>();
  std::vector<int64_t> id0 = idx0.to_vector<int64_t>();
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t k = 0; k < wide; ++k) want0[id0[j * wide + k] * wide + k] += s0[j * wide + k];
  EXPECT_EQ(kernels::scatter_add(zeros({bins, wide}), 0, idx0, src0).to_vector<float>(), want0);
}

TEST(IndexScatterAdd, Errors) {
  Tensor x = zeros({2, 3}, DType::Float64);
  EXPECT_THROWS_WITH(kernels::scatter_add(x, 1, ivec({5}, {1, 1}), dvec({1}, {1, 1})), "scatter_add", "index 5",
                     "dim 1", "size 3");
  EXPECT_THROWS_WITH(kernels::scatter_add(x, 1, dvec({0}, {1, 1}), dvec({1}, {1, 1})), "scatter_add",
                     "index must be int32 or int64, got float64");
  EXPECT_THROWS_WITH(kernels::scatter_add(x, 1, ivec({0, 0}, {1, 2}), dvec({1}, {1, 1})), "scatter_add",
                     "larger than src");
  EXPECT_THROWS_WITH(kernels::scatter_add(x, 1, ivec({0}, {1, 1}), kernels::cast(dvec({1}, {1, 1}), DType::Float32)),
                     "scatter_add", "dtypes");
}

// ---- index_add ---------------------------------------------------------------------------------------------
TEST(IndexAdd, RepeatedRowsAccumulate) {
  Tensor r = kernels::index_add(x23(), 0, ivec({1, 1, 0}), dvec({1, 1, 1, 10, 10, 10, 100, 100, 100}, {3, 3}));
  EXPECT_TRUE(values_equal(r, {100, 101, 102, 14, 15, 16}));
  Tensor c = kernels::index_add(x23(), 1, ivec({2, 2}), dvec({1, 2, 3, 4}, {2, 2}));
  EXPECT_TRUE(values_equal(c, {0, 1, 5, 3, 4, 12}));
}

TEST(IndexAdd, NonContiguousSrcAndInput) {
  Tensor x = kernels::transpose(zeros({3, 2}, DType::Float64), 0, 1);     // [2, 3]
  Tensor src = kernels::transpose(dvec({1, 2, 3, 4}, {2, 2}), 0, 1);      // [[1, 3], [2, 4]]
  Tensor r = kernels::index_add(x, 1, ivec({0, 0}), src);
  EXPECT_TRUE(values_equal(r, {4, 0, 0, 6, 0, 0}));
}

TEST(IndexAdd, EmbeddingBackwardShapeIsSequential) {
  // [V, D] table, many repeated rows: one outer row, so columns are split across threads.
  const int64_t n = 4096, vocab = 5, d = 300;
  Tensor src = kernels::cast(test::random_tensor({n, d}, DType::Float64, 7), DType::Float32);
  Tensor idx = test::random_index({n}, vocab, 8, DType::Int32);
  std::vector<float> want(vocab * d, 0.0f), s = src.to_vector<float>();
  std::vector<int64_t> id = idx.to_vector<int64_t>();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k < d; ++k) want[id[j] * d + k] += s[j * d + k];
  EXPECT_EQ(kernels::index_add(zeros({vocab, d}), 0, idx, src).to_vector<float>(), want);
}

TEST(IndexAdd, Errors) {
  EXPECT_THROWS_WITH(kernels::index_add(x23(), 0, ivec({2}), dvec({1, 1, 1}, {1, 3})), "index_add", "index 2",
                     "dim 0", "size 2");
  EXPECT_THROWS_WITH(kernels::index_add(x23(), 0, ivec({0, 1}), dvec({1, 1, 1}, {1, 3})), "index_add",
                     "does not fit");
  EXPECT_THROWS_WITH(kernels::index_add(x23(), 0, dvec({0}, {1}), dvec({1, 1, 1}, {1, 3})), "index_add",
                     "int32 or int64");
}

// ---- pad --------------------------------------------------------------------------------------------------------
TEST(IndexPad, ConstantBothSidesAndStrided) {
  Tensor p = kernels::pad(x23(), 1, 1, 2, -1);
  EXPECT_EQ(p.sizes(), (Shape{2, 6}));
  EXPECT_TRUE(values_equal(p, {-1, 0, 1, 2, -1, -1, -1, 3, 4, 5, -1, -1}));
  Tensor t = kernels::pad(kernels::transpose(x23(), 0, 1), 0, 0, 1, 9);
  EXPECT_TRUE(values_equal(t, {0, 3, 1, 4, 2, 5, 9, 9}));
  Tensor i = kernels::pad(ivec({1, 2}), 0, 2, 0, 7);
  EXPECT_EQ(i.dtype(), DType::Int64);
  EXPECT_TRUE(values_equal(i, {7, 7, 1, 2}));
}

TEST(IndexPad, Errors) {
  EXPECT_THROWS_WITH(kernels::pad(x23(), 0, -1, 0, 0), "pad", "non-negative", "-1");
  EXPECT_THROWS_WITH(kernels::pad(scalar_tensor(1), 0, 1, 0, 0), "pad", "0-d");
}

// ---- devices ---------------------------------------------------------------------------------------------------
TEST(CudaIndexDevices, MixedDevicesAreNamed) {
  SKIP_WITHOUT_CUDA();
  Tensor g = kernels::to_device(x23(), Device::cuda(0));
  EXPECT_THROWS_WITH(kernels::index_select(g, 0, ivec({0})), "index_select", "different devices", "cpu");
  EXPECT_THROWS_WITH(kernels::cat({x23(), g}, 0), "cat", "different devices");
}

}  // namespace
}  // namespace rematch
