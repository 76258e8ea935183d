// CUDA index and sort kernels (tensor/cuda/index.cu, tensor/cuda/sort.cu) against the CPU result of the same
// inputs, bit for bit: index_select, gather, scatter_add and index_add over every dtype and dim, strided views,
// heavily repeated indices (whose sums must come out in the CPU's order), run-to-run determinism, empty inputs,
// out-of-range errors; sort and top-k with ties, NaN of either sign, ±0 and ±inf, every dim and odd sizes.
// Skipped without a CUDA device.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "test_util.h"

namespace rematch {
namespace {

using test::random_index;
using test::random_tensor;

Tensor on_gpu(const Tensor& t) { return kernels::to_device(kernels::contiguous(t), Device::cuda(0)); }

// got (a fresh contiguous CUDA result) has want's shape, dtype and bytes.
::testing::AssertionResult bitwise_equal(const Tensor& got, const Tensor& want) {
  if (!got.device().is_cuda()) return ::testing::AssertionFailure() << "result is on " << got.device().str();
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << "got " << got.describe() << ", expected " << want.describe();
  const Tensor g = kernels::to_device(got, Device::cpu()), w = kernels::contiguous(want);
  const size_t esize = dtype_size(g.dtype());
  const char* gp = static_cast<const char*>(g.raw_data());
  const char* wp = static_cast<const char*>(w.raw_data());
  for (int64_t i = 0; i < g.numel(); ++i)
    if (std::memcmp(gp + i * esize, wp + i * esize, esize) != 0) {
      const Tensor gv = kernels::select(kernels::flatten(g), 0, i), wv = kernels::select(kernels::flatten(w), 0, i);
      return ::testing::AssertionFailure() << "element " << i << " of " << want.describe() << ": got "
                                           << gv.item<double>() << ", expected " << wv.item<double>();
    }
  return ::testing::AssertionSuccess();
}

// Values of every dtype: small non-negative integers (so integer and uint8 sums stay exact and in range),
// 0/1 for bool, uniform in [-1, 1) for floats.
Tensor values_of(DType dtype, const Shape& shape, uint32_t seed) {
  if (is_floating(dtype)) return random_tensor(shape, dtype, seed);
  return random_tensor(shape, dtype, seed, 0, dtype == DType::Bool ? 2 : 20);
}

const std::vector<DType> kAllDTypes = {DType::Float32, DType::Float64, DType::Int32,
                                       DType::Int64,   DType::Bool,    DType::UInt8};
const std::vector<DType> kNumericDTypes = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::UInt8};
const std::vector<DType> kIndexDTypes = {DType::Int64, DType::Int32};

using View = std::function<Tensor(const Tensor&)>;
Tensor same(const Tensor& t) { return t; }

class CudaIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_CUDA();
  }
};
using CudaSort = CudaIndex;

// ---- index_select ---------------------------------------------------------------------------------------------
TEST_F(CudaIndex, IndexSelectEveryDTypeAndDim) {
  uint32_t seed = 1;
  const Shape shape{7, 33, 5};
  for (DType dtype : kAllDTypes)
    for (DType idtype : kIndexDTypes)
      for (int64_t dim = 0; dim < 3; ++dim) {
        const Tensor x = values_of(dtype, shape, seed++);
        const Tensor index = random_index({129}, shape[dim], seed++, idtype);
        EXPECT_TRUE(bitwise_equal(kernels::index_select(on_gpu(x), dim, on_gpu(index)),
                                  kernels::index_select(x, dim, index)))
            << dtype_name(dtype) << " index " << dtype_name(idtype) << " dim " << dim;
      }
}

TEST_F(CudaIndex, IndexSelectLargeAndStrided) {
  const Tensor x = random_tensor({1000, 129}, DType::Float32, 10);
  const Tensor rows = random_index({1000}, 1000, 11), cols = random_index({7}, 129, 12, DType::Int32);
  EXPECT_TRUE(bitwise_equal(kernels::index_select(on_gpu(x), 0, on_gpu(rows)), kernels::index_select(x, 0, rows)));
  EXPECT_TRUE(bitwise_equal(kernels::index_select(on_gpu(x), -1, on_gpu(cols)), kernels::index_select(x, -1, cols)));
  // A transposed x and a stepped index are read in place.
  const View t = [](const Tensor& v) { return kernels::transpose(v, 0, 1); };
  const View stepped = [](const Tensor& v) { return kernels::slice(v, 0, 1, v.size(0), 2); };
  EXPECT_TRUE(bitwise_equal(kernels::index_select(t(on_gpu(x)), 1, stepped(on_gpu(rows))),
                            kernels::index_select(t(x), 1, stepped(rows))));
  EXPECT_TRUE(
      bitwise_equal(kernels::index_select(t(on_gpu(x)), 0, on_gpu(cols)), kernels::index_select(t(x), 0, cols)));
}

// ---- gather ---------------------------------------------------------------------------------------------------
TEST_F(CudaIndex, GatherEveryDTypeAndDim) {
  uint32_t seed = 20;
  const Shape shape{7, 33, 5};
  for (DType dtype : kAllDTypes)
    for (DType idtype : kIndexDTypes)
      for (int64_t dim = 0; dim < 3; ++dim) {
        const Tensor x = values_of(dtype, shape, seed++);
        // Longer than x along dim, shorter in another dim.
        Shape ishape = shape;
        ishape[dim] = 40;
        ishape[(dim + 1) % 3] -= 2;
        const Tensor index = random_index(ishape, shape[dim], seed++, idtype);
        EXPECT_TRUE(bitwise_equal(kernels::gather(on_gpu(x), dim, on_gpu(index)), kernels::gather(x, dim, index)))
            << dtype_name(dtype) << " index " << dtype_name(idtype) << " dim " << dim;
      }
}

TEST_F(CudaIndex, GatherStrided) {
  const Tensor x = random_tensor({129, 1000}, DType::Float32, 30);
  const Tensor index = random_index({129, 7}, 129, 31);
  const View t = [](const Tensor& v) { return kernels::transpose(v, 0, 1); };
  // x viewed as [1000, 129], index as [7, 129]: both transposed views.
  EXPECT_TRUE(bitwise_equal(kernels::gather(t(on_gpu(x)), 1, t(on_gpu(index))), kernels::gather(t(x), 1, t(index))));
  const Tensor one = random_index({1, 1}, 1000, 32);
  EXPECT_TRUE(bitwise_equal(kernels::gather(on_gpu(x), 1, on_gpu(one)), kernels::gather(x, 1, one)));
}

// ---- scatter_add ----------------------------------------------------------------------------------------------
TEST_F(CudaIndex, ScatterAddEveryDTypeAndDimWithRepeats) {
  uint32_t seed = 40;
  const Shape shape{7, 33, 5};
  for (DType dtype : kNumericDTypes)
    for (DType idtype : kIndexDTypes)
      for (int64_t dim = 0; dim < 3; ++dim) {
        const Tensor x = values_of(dtype, shape, seed++);
        // Many more sources than destinations along dim, all landing on the first 3 slots; src larger than index.
        Shape ishape = shape, sshape = shape;
        ishape[dim] = 129;
        ishape[(dim + 2) % 3] -= 1;
        sshape[dim] = 131;
        const Tensor index = random_index(ishape, 3, seed++, idtype);
        const Tensor src = values_of(dtype, sshape, seed++);
        EXPECT_TRUE(bitwise_equal(kernels::scatter_add(on_gpu(x), dim, on_gpu(index), on_gpu(src)),
                                  kernels::scatter_add(x, dim, index, src)))
            << dtype_name(dtype) << " index " << dtype_name(idtype) << " dim " << dim;
      }
}

TEST_F(CudaIndex, ScatterAddIsDeterministicAndInTheCpuOrder) {
  // 1000 float32 sources per row into 7 slots: the sum depends on the order of the additions, so equality with
  // the CPU bit for bit shows the order is the CPU's (increasing source index), and two runs agree.
  const Tensor x = random_tensor({129, 7}, DType::Float32, 50);
  const Tensor index = random_index({129, 1000}, 7, 51);
  const Tensor src = random_tensor({129, 1000}, DType::Float32, 52, -1000, 1000);
  const Tensor gx = on_gpu(x), gi = on_gpu(index), gs = on_gpu(src);
  const Tensor first = kernels::scatter_add(gx, 1, gi, gs);
  const Tensor second = kernels::scatter_add(gx, 1, gi, gs);
  EXPECT_TRUE(bitwise_equal(second, kernels::to_device(first, Device::cpu())));
  EXPECT_TRUE(bitwise_equal(first, kernels::scatter_add(x, 1, index, src)));
  // Every source onto one destination: a single run of 1000 additions.
  const Tensor all_zero = kernels::cast(random_index({1, 1000}, 1, 53), DType::Int32);
  EXPECT_TRUE(bitwise_equal(kernels::scatter_add(on_gpu(x), 1, on_gpu(all_zero), on_gpu(src)),
                            kernels::scatter_add(x, 1, all_zero, src)));
}

TEST_F(CudaIndex, ScatterAddStrided) {
  const View t = [](const Tensor& v) { return kernels::transpose(v, 0, 1); };
  const Tensor x = random_tensor({33, 7}, DType::Float64, 60);      // read as [7, 33]
  const Tensor index = random_index({129, 7}, 33, 61);              // read as [7, 129]
  const Tensor src = random_tensor({129, 7}, DType::Float64, 62);   // read as [7, 129]
  EXPECT_TRUE(bitwise_equal(kernels::scatter_add(t(on_gpu(x)), 1, t(on_gpu(index)), t(on_gpu(src))),
                            kernels::scatter_add(t(x), 1, t(index), t(src))));
}

// ---- index_add ------------------------------------------------------------------------------------------------
TEST_F(CudaIndex, IndexAddEveryDTypeAndDimWithRepeats) {
  uint32_t seed = 70;
  const Shape shape{7, 33, 5};
  for (DType dtype : kNumericDTypes)
    for (DType idtype : kIndexDTypes)
      for (int64_t dim = 0; dim < 3; ++dim) {
        const Tensor x = values_of(dtype, shape, seed++);
        Shape sshape = shape;
        sshape[dim] = 129;
        const Tensor index = random_index({129}, 2, seed++, idtype);
        const Tensor src = values_of(dtype, sshape, seed++);
        EXPECT_TRUE(bitwise_equal(kernels::index_add(on_gpu(x), dim, on_gpu(index), on_gpu(src)),
                                  kernels::index_add(x, dim, index, src)))
            << dtype_name(dtype) << " index " << dtype_name(idtype) << " dim " << dim;
      }
}

TEST_F(CudaIndex, IndexAddEmbeddingBackwardShape) {
  // The backward of an embedding lookup: 1000 token rows into a 129-row table, with repeats.
  const Tensor table = random_tensor({129, 7}, DType::Float32, 80);
  const Tensor tokens = random_index({1000}, 129, 81);
  const Tensor grads = random_tensor({1000, 7}, DType::Float32, 82);
  EXPECT_TRUE(bitwise_equal(kernels::index_add(on_gpu(table), 0, on_gpu(tokens), on_gpu(grads)),
                            kernels::index_add(table, 0, tokens, grads)));
  const View stepped = [](const Tensor& v) { return kernels::slice(v, 0, 0, v.size(0), 2); };
  const View t = [](const Tensor& v) { return kernels::transpose(v, 0, 1); };
  // Stepped index and src, transposed x and src.
  EXPECT_TRUE(bitwise_equal(kernels::index_add(on_gpu(table), 0, stepped(on_gpu(tokens)), stepped(on_gpu(grads))),
                            kernels::index_add(table, 0, stepped(tokens), stepped(grads))));
  const Tensor xt = random_tensor({7, 129}, DType::Float32, 83), st = random_tensor({7, 1000}, DType::Float32, 84);
  EXPECT_TRUE(bitwise_equal(kernels::index_add(t(on_gpu(xt)), 0, on_gpu(tokens), t(on_gpu(st))),
                            kernels::index_add(t(xt), 0, tokens, t(st))));
}

// ---- empty inputs and errors ----------------------------------------------------------------------------------
TEST_F(CudaIndex, EmptyInputs) {
  const Tensor x = random_tensor({7, 5}, DType::Float32, 90);
  const Tensor none = random_index({0}, 7, 91);
  EXPECT_TRUE(bitwise_equal(kernels::index_select(on_gpu(x), 0, on_gpu(none)), kernels::index_select(x, 0, none)));
  EXPECT_TRUE(
      bitwise_equal(kernels::index_add(on_gpu(x), 0, on_gpu(none), on_gpu(random_tensor({0, 5}, DType::Float32))),
                    kernels::index_add(x, 0, none, random_tensor({0, 5}, DType::Float32))));
  const Tensor none2 = random_index({0, 5}, 7, 92);
  EXPECT_TRUE(bitwise_equal(kernels::gather(on_gpu(x), 0, on_gpu(none2)), kernels::gather(x, 0, none2)));
  EXPECT_TRUE(
      bitwise_equal(kernels::scatter_add(on_gpu(x), 0, on_gpu(none2), on_gpu(random_tensor({0, 5}, DType::Float32))),
                    kernels::scatter_add(x, 0, none2, random_tensor({0, 5}, DType::Float32))));
  // x with an empty dim other than the indexed one.
  const Tensor flat = random_tensor({7, 0}, DType::Float32, 93);
  const Tensor some = random_index({3}, 7, 94);
  EXPECT_TRUE(
      bitwise_equal(kernels::index_select(on_gpu(flat), 0, on_gpu(some)), kernels::index_select(flat, 0, some)));
}

TEST_F(CudaIndex, OutOfRangeIndexIsNamedAsOnTheCpu) {
  const Tensor x = on_gpu(random_tensor({7, 5}, DType::Float32, 95));
  // The first bad value in row-major order is reported, with its position: here 9 at position 3.
  const Tensor bad = from_vector(std::vector<int64_t>{0, 6, 2, 9, -1, 11});
  EXPECT_THROWS_WITH(kernels::index_select(x, 0, on_gpu(bad)), "index_select", "index 9", "flat position 3",
                     "dim 0 of size 7", "cuda:0");
  const Tensor bad32 = kernels::cast(from_vector(std::vector<int64_t>{1, 2, -3, 4}, {2, 2}), DType::Int32);
  EXPECT_THROWS_WITH(kernels::gather(x, 1, on_gpu(bad32)), "gather", "index -3", "flat position 2");
  // A transposed index is searched in its own row-major order: [[1, -3], [2, 4]] has -3 at position 1.
  EXPECT_THROWS_WITH(kernels::gather(x, 1, kernels::transpose(on_gpu(bad32), 0, 1)), "gather", "index -3",
                     "flat position 1");
  EXPECT_THROWS_WITH(kernels::scatter_add(x, 1, on_gpu(bad32), x), "scatter_add", "index -3");
  EXPECT_THROWS_WITH(kernels::index_add(x, 0, on_gpu(bad), on_gpu(random_tensor({6, 5}, DType::Float32))),
                     "index_add", "index 9");
}

// ---- sort and topk --------------------------------------------------------------------------------------------
// float values drawn from a few levels (many ties) and the special values whose order needs care: NaN of
// both signs (all equal, the largest), -0.0 == +0.0, ±inf.
Tensor tricky_floats(const Shape& shape, DType dtype, uint32_t seed) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> levels = {nan, -nan, inf, -inf, 0.0, -0.0, 1.5, -1.5, 2.0, 1e-30};
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, 2 * static_cast<int>(levels.size()) - 1);
  std::uniform_real_distribution<double> uniform(-2, 2);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& e : v) {
    const int p = pick(gen);
    e = p < static_cast<int>(levels.size()) ? levels[static_cast<size_t>(p)] : uniform(gen);
  }
  Tensor t = from_vector(v, shape);
  if (dtype == DType::Float64) return t;
  // Cast on the host through float so that NaN signs survive (they do through static_cast).
  std::vector<float> f(v.begin(), v.end());
  return from_vector(f, shape);
}

Tensor sort_input(DType dtype, const Shape& shape, uint32_t seed) {
  if (is_floating(dtype)) return tricky_floats(shape, dtype, seed);
  // Integers in a narrow range, so lanes are full of ties; int32/int64 also negative.
  const double lo = dtype == DType::UInt8 ? 0 : -5;
  return random_tensor(shape, dtype, seed, lo, lo + 10);
}

void expect_sort_matches(const Tensor& x, int64_t dim, bool descending, const View& view = same) {
  const auto [gv, gi] = kernels::sort(view(on_gpu(x)), dim, descending);
  const auto [cv, ci] = kernels::sort(view(x), dim, descending);
  EXPECT_TRUE(bitwise_equal(gv, cv)) << "values of " << view(x).describe() << " dim " << dim << " descending "
                                     << descending;
  EXPECT_TRUE(bitwise_equal(gi, ci)) << "indices of " << view(x).describe() << " dim " << dim << " descending "
                                     << descending;
}

void expect_topk_matches(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  const auto [gv, gi] = kernels::topk(on_gpu(x), k, dim, largest);
  const auto [cv, ci] = kernels::topk(x, k, dim, largest);
  EXPECT_TRUE(bitwise_equal(gv, cv)) << "top-" << k << " values of " << x.describe() << " dim " << dim;
  EXPECT_TRUE(bitwise_equal(gi, ci)) << "top-" << k << " indices of " << x.describe() << " dim " << dim;
}

TEST_F(CudaSort, EveryDTypeDimAndDirection) {
  uint32_t seed = 100;
  for (DType dtype : kNumericDTypes) {
    const Tensor x = sort_input(dtype, {7, 33, 5}, seed++);
    for (int64_t dim = 0; dim < 3; ++dim)
      for (bool descending : {false, true}) expect_sort_matches(x, dim, descending);
  }
}

TEST_F(CudaSort, OddSizesAndLongLanes) {
  uint32_t seed = 200;
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int64}) {
    for (int64_t n : {1, 7, 129, 1000})
      for (bool descending : {false, true}) expect_sort_matches(sort_input(dtype, {n}, seed++), 0, descending);
    const Tensor wide = sort_input(dtype, {1000, 129}, seed++);
    for (bool descending : {false, true}) {
      expect_sort_matches(wide, 0, descending);
      expect_sort_matches(wide, 1, descending);
    }
  }
  // 0-d and all-size-1 inputs.
  expect_sort_matches(scalar_tensor(3.5), 0, false);
  expect_sort_matches(sort_input(DType::Float32, {1, 1}, seed++), 1, true);
}

TEST_F(CudaSort, NonContiguousInput) {
  const View t = [](const Tensor& v) { return kernels::transpose(v, 0, 1); };
  const Tensor x = sort_input(DType::Float32, {129, 7}, 300);
  for (bool descending : {false, true}) {
    expect_sort_matches(x, 0, descending, t);
    expect_sort_matches(x, 1, descending, t);
  }
}

TEST_F(CudaSort, TopK) {
  uint32_t seed = 400;
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int32, DType::UInt8}) {
    const Tensor x = sort_input(dtype, {7, 129, 5}, seed++);
    for (int64_t dim = 0; dim < 3; ++dim)
      for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{7}})  // 7: all of dims 0, not more than dim 2 has
        for (bool largest : {false, true}) expect_topk_matches(x, std::min(k, x.size(dim)), dim, largest);
    expect_topk_matches(x, 129, 1, true);
  }
  const Tensor long_lane = sort_input(DType::Float32, {1000}, seed++);
  for (bool largest : {false, true}) expect_topk_matches(long_lane, 10, 0, largest);
}

}  // namespace
}  // namespace rematch
