// The CUDA reductions (tensor/cuda/reduce.cu) and fused row ops (tensor/cuda/softmax.cu) against the CPU:
// Sum/Mean/Max/Min over last, first, middle, several and all dims (row and column kernels, with and without R
// split across blocks), indexed Max/Min with ties and NaN (first occurrence), logsumexp, softmax and
// log_softmax with their backwards, and the l1/l2 normalisations, along every kind of dim, on odd sizes,
// empty and non-contiguous inputs, and rows holding -inf, +inf and NaN.
// Float32 sums are held to the correctly rounded float64 result (the CUDA kernels accumulate in double);
// integer results, extremes and indices must match exactly. Skipped without a CUDA device.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tensor/creation.h"
#include "test_util.h"

namespace rematch {
namespace {

using kernels::ReduceOp;
using test::all_close;

const Device kGpu = Device::cuda(0);
const std::vector<DType> kNumeric = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::UInt8};
// Over the last dim, the first, and all of a 2-D tensor.
const std::vector<std::vector<int64_t>> kDimChoices = {{1}, {0}, {}};

Tensor gpu(const Tensor& t) { return kernels::to_device(t, kGpu); }

// Floats in [-3, 3); integers from a small range, so that extremes tie; uint8 non-negative. (random_tensor
// makes a 0-d shape 1-D; the reshape restores it.)
Tensor values(const Shape& shape, DType dt, uint32_t seed) {
  const double lo = is_floating(dt) ? -3 : (dt == DType::UInt8 ? 0 : -6);
  const double hi = is_floating(dt) ? 3 : (dt == DType::UInt8 ? 12 : 6);
  return kernels::reshape(test::random_tensor(shape, dt, seed, lo, hi), shape);
}

// x with `v` written at the given flat positions (on the host).
Tensor with_values_at(const Tensor& x, const std::vector<int64_t>& positions, double v) {
  std::vector<double> data = x.to_vector<double>();
  for (int64_t p : positions) data[static_cast<size_t>(p)] = v;
  return kernels::cast(kernels::reshape(from_vector(data, {x.numel()}), x.sizes()), x.dtype());
}

// The flat positions of row `row` of a [rows, n] tensor.
std::vector<int64_t> row_positions(int64_t row, int64_t n) {
  std::vector<int64_t> p;
  for (int64_t i = 0; i < n; ++i) p.push_back(row * n + i);
  return p;
}

struct ReduceCase {
  std::string name;
  Shape shape;
  std::vector<int64_t> dims;
  std::function<Tensor(const Tensor&)> view;
};

Tensor same(const Tensor& t) { return t; }

const std::vector<ReduceCase>& reduce_cases() {
  static const std::vector<ReduceCase> cases = {
      {"all of 4097", {4097}, {}, same},
      {"one", {1}, {0}, same},
      {"0-d", {}, {}, same},
      {"rows", {7, 1023}, {1}, same},
      {"columns", {7, 1023}, {0}, same},
      {"middle, inner 3", {33, 65, 3}, {1}, same},
      {"middle block", {2, 3, 4, 5}, {1, 2}, same},
      {"scattered dims", {2, 3, 4, 5}, {0, 2}, same},
      {"long row, split", {1, 300000}, {1}, same},
      {"long column, split", {300000, 3}, {0}, same},
      {"wide columns, split", {5000, 700}, {0}, same},
      {"all of a large tensor", {640, 1000}, {}, same},
      {"transposed", {65, 33}, {1}, [](const Tensor& t) { return kernels::transpose(t, 0, 1); }},
      {"stepped slice", {9, 40}, {1}, [](const Tensor& t) { return kernels::slice(t, 1, 0, 40, 3); }},
      {"empty output", {0, 4}, {1}, same},
  };
  return cases;
}

// The reference: float32 through float64 and rounded back (what a double accumulator gives), integer sums
// through int64 and converted back (wrapping modulo 2^bits, as the element type does), the rest as is.
Tensor reduce_reference(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  const DType dt = x.dtype();
  const bool sum_like = op == ReduceOp::Sum || op == ReduceOp::Mean;
  if (dt == DType::Float32 && sum_like)
    return kernels::cast(kernels::reduce(op, kernels::cast(x, DType::Float64), dims, keepdim), dt);
  if (!is_floating(dt) && sum_like)
    return kernels::cast(kernels::reduce(op, kernels::cast(x, DType::Int64), dims, keepdim), dt);
  return kernels::reduce(op, x, dims, keepdim);
}

::testing::AssertionResult reduce_matches(const Tensor& got, const Tensor& want, ReduceOp op) {
  if (got.device() != kGpu) return ::testing::AssertionFailure() << "result on " << got.device().str();
  if (got.dtype() != want.dtype()) return ::testing::AssertionFailure() << "dtype " << dtype_name(got.dtype());
  const bool sum_like = op == ReduceOp::Sum || op == ReduceOp::Mean;
  if (!sum_like || !is_floating(want.dtype())) return all_close(got, want, 0, 0);
  // One rounding of float32 apart at most; float64 sums differ only in the order of the additions.
  return want.dtype() == DType::Float32 ? all_close(got, want, 1e-9, 5e-7) : all_close(got, want, 1e-12, 1e-12);
}

TEST(CudaReduce, MatchesCpuForEveryOpDtypeAndLayout) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : kNumeric)
    for (const ReduceCase& c : reduce_cases()) {
      const Tensor base = values(c.shape, dt, 1);
      const Tensor x = c.view(base), xg = c.view(gpu(base));
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
        if (op == ReduceOp::Mean && !is_floating(dt)) continue;
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(std::string(dtype_name(dt)) + " " + c.name + " op " + std::to_string(static_cast<int>(op)) +
                       (keepdim ? " keepdim" : ""));
          EXPECT_TRUE(reduce_matches(kernels::reduce(op, xg, c.dims, keepdim), reduce_reference(op, x, c.dims, keepdim),
                                     op));
        }
      }
    }
}

TEST(CudaReduce, EmptyReductionsAndRefusals) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = zeros({3, 0}, DType::Float32);
  EXPECT_TRUE(all_close(kernels::reduce(ReduceOp::Sum, gpu(x), {1}, false),
                        kernels::reduce(ReduceOp::Sum, x, {1}, false), 0, 0));
  EXPECT_TRUE(all_close(kernels::reduce(ReduceOp::Mean, gpu(x), {1}, true),
                        kernels::reduce(ReduceOp::Mean, x, {1}, true), 0, 0));
  EXPECT_THROWS_WITH(kernels::reduce(ReduceOp::Max, gpu(x), {1}, false), "max", "zero elements");
  EXPECT_THROWS_WITH(kernels::reduce(ReduceOp::Sum, gpu(zeros({2}, DType::Bool)), {}, false), "sum", "bool");
}

// NaN anywhere in a reduced run makes Sum/Mean/Max/Min NaN; +inf and -inf together sum to NaN.
TEST(CudaReduce, NonFiniteValuesPropagateAsOnCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = values({6, 1000}, dt, 2);
    x = with_values_at(x, {17, 2999}, std::nan(""));        // rows 0 and 2
    x = with_values_at(x, {3000 + 5}, INFINITY);             // row 3: +inf
    x = with_values_at(x, {4000 + 9, 4000 + 999}, INFINITY);  // row 4: +inf twice
    x = with_values_at(x, {4000 + 500}, -INFINITY);          // row 4: and -inf
    x = with_values_at(x, row_positions(5, 1000), -INFINITY);  // row 5: all -inf
    const Tensor xg = gpu(x);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min})
      for (const std::vector<int64_t>& dims : kDimChoices) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " op " + std::to_string(static_cast<int>(op)) + " over " +
                     std::to_string(dims.size()) + " dims");
        EXPECT_TRUE(reduce_matches(kernels::reduce(op, xg, dims, false), reduce_reference(op, x, dims, false), op));
      }
  }
}

// Ties everywhere (few distinct values, ±0) and NaN in some rows: the first occurrence, or the first NaN.
Tensor tied(const Shape& shape, DType dt, uint32_t seed) {
  if (!is_floating(dt)) return values(shape, dt, seed);
  std::vector<double> v = test::random_tensor(shape, DType::Float64, seed, 0, 6).to_vector<double>();
  const double levels[] = {-1, -0.5, 0.0, -0.0, 0.5, 1};
  for (double& e : v) e = levels[static_cast<int>(e)];
  return kernels::cast(kernels::reshape(from_vector(v, {static_cast<int64_t>(v.size())}), shape), dt);
}

TEST(CudaReduce, IndexedMaxMinPicksFirstOccurrence) {
  SKIP_WITHOUT_CUDA();
  struct Case {
    Shape shape;
    int64_t dim;
  };
  const std::vector<Case> cases = {{{4097}, 0},     {{7, 1023}, 1},    {{7, 1023}, 0}, {{33, 65, 3}, 1},
                                   {{1, 300000}, 1}, {{300000, 2}, 0}, {{}, 0},        {{5, 1}, 1}};
  for (DType dt : kNumeric)
    for (const Case& c : cases) {
      Tensor x = tied(c.shape, dt, 3);
      if (is_floating(dt) && x.numel() > 40) x = with_values_at(x, {7, 9, 30, x.numel() - 1}, std::nan(""));
      const Tensor xg = gpu(x);
      for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min})
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(std::string(dtype_name(dt)) + " " + x.shape_str() + " dim " + std::to_string(c.dim) +
                       (op == ReduceOp::Max ? " max" : " min") + (keepdim ? " keepdim" : ""));
          const auto [values_gpu, indices_gpu] = kernels::reduce_with_index(op, xg, c.dim, keepdim);
          const auto [values_cpu, indices_cpu] = kernels::reduce_with_index(op, x, c.dim, keepdim);
          EXPECT_EQ(values_gpu.device(), kGpu);
          EXPECT_EQ(indices_gpu.dtype(), DType::Int64);
          EXPECT_TRUE(all_close(values_gpu, values_cpu, 0, 0));
          EXPECT_EQ(indices_gpu.to_vector<int64_t>(), indices_cpu.to_vector<int64_t>());
        }
    }
  // A transposed input goes through a permuted copy.
  const Tensor base = tied({65, 33}, DType::Float32, 4);
  const auto [vg, ig] = kernels::reduce_with_index(ReduceOp::Max, kernels::transpose(gpu(base), 0, 1), 1, false);
  const auto [vc, ic] = kernels::reduce_with_index(ReduceOp::Max, kernels::transpose(base, 0, 1), 1, false);
  EXPECT_TRUE(all_close(vg, vc, 0, 0));
  EXPECT_EQ(ig.to_vector<int64_t>(), ic.to_vector<int64_t>());
  // -0 and +0 tie: the first of them is the maximum.
  const Tensor zeros_tie = from_vector<float>({-1.f, -0.f, 0.f, -0.f, -2.f});
  EXPECT_EQ(kernels::reduce_with_index(ReduceOp::Max, gpu(zeros_tie), 0, false).second.item<int64_t>(), 1);
  EXPECT_EQ(kernels::reduce_with_index(ReduceOp::Min, gpu(zeros_tie), 0, false).second.item<int64_t>(), 4);
}

TEST(CudaReduce, LogsumexpMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = kernels::scalar_op(kernels::ScalarOp::Mul, values({5, 300}, dt, 5), 10.0);
    x = with_values_at(x, {3, 100}, -INFINITY);               // row 0: masked entries
    x = with_values_at(x, row_positions(1, 300), -INFINITY);  // row 1: all -inf
    x = with_values_at(x, {600 + 7}, INFINITY);               // row 2: +inf
    const double tol = dt == DType::Float32 ? 1e-5 : 1e-12;
    for (const std::vector<int64_t>& dims : kDimChoices)
      for (bool keepdim : {false, true})
        EXPECT_TRUE(
            all_close(kernels::logsumexp(gpu(x), dims, keepdim), kernels::logsumexp(x, dims, keepdim), tol, tol));
  }
}

// ---- fused row ops ----------------------------------------------------------------------------------------------
struct RowCase {
  std::string name;
  Shape shape;
  int64_t dim;
  std::function<Tensor(const Tensor&)> view;
};

const std::vector<RowCase>& row_cases() {
  static const std::vector<RowCase> cases = {
      {"rows", {7, 1023}, 1, same},
      {"last via -1", {7, 1023}, -1, same},
      {"dim 0", {7, 1023}, 0, same},
      {"1-D 4097", {4097}, 0, same},
      {"one", {1}, 0, same},
      {"0-d", {}, 0, same},
      {"length-1 dim", {3, 1, 5}, 1, same},
      {"middle, inner 3", {33, 65, 3}, 1, same},
      {"middle, inner 2", {2, 4097, 2}, 1, same},
      {"long rows", {3, 70000}, 1, same},
      {"long lanes", {100000, 4}, 0, same},
      {"many short rows", {20000, 7}, 1, same},
      {"transposed", {65, 33}, 1, [](const Tensor& t) { return kernels::transpose(t, 0, 1); }},
      {"empty rows", {0, 5}, 1, same},
      {"empty dim", {5, 0}, 1, same},
  };
  return cases;
}

// Float32 results are held to the float64 computation on the CPU, float64 ones to the CPU's float64. Float32
// lane sums accumulate in float32 on both devices (a thread may add a thousand terms in turn), hence the
// relative 3e-5; `atol32` is for outputs near zero whose error scales with something larger (log_softmax).
::testing::AssertionResult row_matches(const Tensor& got, const Tensor& want64, DType dt, double atol32 = 1e-12) {
  if (got.device() != kGpu) return ::testing::AssertionFailure() << "result on " << got.device().str();
  if (got.dtype() != dt) return ::testing::AssertionFailure() << "dtype " << dtype_name(got.dtype());
  if (dt == DType::Float32) return all_close(got, kernels::cast(want64, dt), atol32, 3e-5);
  return all_close(got, want64, 1e-13, 1e-12);
}

TEST(CudaSoftmax, SoftmaxAndLogSoftmaxMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::Float32, DType::Float64})
    for (const RowCase& c : row_cases()) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + c.name);
      const Tensor base = kernels::scalar_op(kernels::ScalarOp::Mul, values(c.shape, dt, 6), 4.0);
      const Tensor x = c.view(base), xg = c.view(gpu(base));
      const Tensor x64 = kernels::cast(x, DType::Float64);
      EXPECT_TRUE(row_matches(kernels::softmax(xg, c.dim), kernels::softmax(x64, c.dim), dt));
      EXPECT_TRUE(row_matches(kernels::log_softmax(xg, c.dim), kernels::log_softmax(x64, c.dim), dt, 1e-5));
    }
}

// Masked entries (-inf) get exactly 0; a row of all -inf, or holding +inf or NaN, is NaN throughout, along the
// last dim (row kernel) and along dim 0 (lane kernel).
TEST(CudaSoftmax, NonFiniteRowsAsOnCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = values({5, 200}, dt, 7);
    x = with_values_at(x, {1, 50, 199}, -INFINITY);           // row 0: masked
    x = with_values_at(x, row_positions(1, 200), -INFINITY);  // row 1: all -inf
    x = with_values_at(x, {400 + 3}, INFINITY);               // row 2: +inf
    x = with_values_at(x, {600 + 150}, std::nan(""));         // row 3: NaN
    for (const Tensor& input : {x, kernels::contiguous(kernels::transpose(x, 0, 1))}) {
      const int64_t dim = input.size(0) == 5 ? 1 : 0;
      const Tensor x64 = kernels::cast(input, DType::Float64);
      EXPECT_TRUE(row_matches(kernels::softmax(gpu(input), dim), kernels::softmax(x64, dim), dt));
      EXPECT_TRUE(row_matches(kernels::log_softmax(gpu(input), dim), kernels::log_softmax(x64, dim), dt, 1e-5));
    }
    const std::vector<double> masked = kernels::softmax(gpu(x), 1).to_vector<double>();
    EXPECT_EQ(masked[1], 0.0);
    EXPECT_EQ(masked[50], 0.0);
  }
}

TEST(CudaSoftmax, BackwardsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::Float32, DType::Float64})
    for (const RowCase& c : row_cases()) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + c.name);
      const Tensor x = c.view(values(c.shape, dt, 8));
      const Tensor g_base = values(c.shape, dt, 9);
      const Tensor g = c.view(g_base), gg = c.view(gpu(g_base));
      const Tensor y = kernels::softmax(x, c.dim), ly = kernels::log_softmax(x, c.dim);
      // Both devices sum in the element type, in different orders; g - c cancels.
      const double atol = dt == DType::Float32 ? 1e-5 : 1e-12, rtol = dt == DType::Float32 ? 1e-4 : 1e-12;
      EXPECT_TRUE(all_close(kernels::softmax_backward(gg, gpu(y), c.dim), kernels::softmax_backward(g, y, c.dim), atol,
                            rtol));
      EXPECT_TRUE(all_close(kernels::log_softmax_backward(gg, gpu(ly), c.dim),
                            kernels::log_softmax_backward(g, ly, c.dim), atol, rtol));
    }
}

TEST(CudaSoftmax, LpNormalizeMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::Float32, DType::Float64})
    for (const RowCase& c : row_cases())
      for (int p : {1, 2})
        for (double eps : {1e-8, 0.0}) {
          SCOPED_TRACE(std::string(dtype_name(dt)) + " " + c.name + " p=" + std::to_string(p) + " eps=" +
                       std::to_string(eps));
          const Tensor x = c.view(values(c.shape, dt, 10)), xg = c.view(gpu(values(c.shape, dt, 10)));
          EXPECT_TRUE(row_matches(kernels::lp_normalize(xg, c.dim, p, eps),
                                  kernels::lp_normalize(kernels::cast(x, DType::Float64), c.dim, p, eps), dt));
        }
  // A zero row: eps keeps it 0; without eps it is 0/0 = NaN on both devices.
  for (double eps : {1e-8, 0.0}) {
    const Tensor z = zeros({3, 4}, DType::Float32);
    EXPECT_TRUE(all_close(kernels::lp_normalize(gpu(z), 1, 2, eps), kernels::lp_normalize(z, 1, 2, eps), 0, 0));
  }
}

}  // namespace
}  // namespace rematch
