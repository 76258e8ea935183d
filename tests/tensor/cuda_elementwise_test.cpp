// The CUDA elementwise kernels (tensor/cuda/elementwise*.cu) against the CPU ones: every unary, scalar and
// binary op of the table (tensor/elementwise_ops.h) in every dtype (its result where its row takes the dtype,
// the same refusal otherwise), where, fill and copy, over inputs that take every kernel path:
// contiguous (16-byte vector loads, with a tail), misaligned, transposed, stepped slices, broadcast (stride 0),
// 0-d, empty, more merged dims than one launch carries, and more elements than 32-bit indexing covers.
// Integer, bool and copy results must match exactly; float math within a few ulp (CUDA's expf/logf/... against
// the CPU's fast_expf and libm). Skipped without a CUDA device.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tensor/creation.h"
#include "test_util.h"

namespace rematch {
namespace {

using kernels::BinaryOp;
using kernels::ScalarOp;
using kernels::UnaryOp;
using test::all_close;

const Device kGpu = Device::cuda(0);
const std::vector<DType> kAll = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::UInt8,
                                 DType::Bool};

// Values for `dt`: floats in [-3, 3) with NaN, ±inf, ±0 and ±1 sprinkled in; integers from a small range so
// that comparisons and extremes see ties; uint8 non-negative; bool about half true.
Tensor values(const Shape& shape, DType dt, uint32_t seed) {
  const double lo = dt == DType::UInt8 ? 0 : (is_floating(dt) ? -3 : -6);
  const double hi = dt == DType::UInt8 ? 12 : (is_floating(dt) ? 3 : 6);
  std::vector<double> v = test::random_tensor(shape, DType::Float64, seed, lo, hi).to_vector<double>();
  const double specials[] = {std::nan(""), INFINITY, -INFINITY, -0.0, 0.0, 1.0, -1.0};
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DType::Bool) v[i] = v[i] > 0 ? 1 : 0;
    else if (!is_floating(dt)) v[i] = std::floor(v[i]);
    else if (i % 11 == 3) v[i] = specials[(i / 11) % 7];
  }
  // (from_vector reads an empty shape as 1-D, so 0-d tensors come from a reshape.)
  return kernels::cast(kernels::reshape(from_vector(v, {static_cast<int64_t>(v.size())}), shape), dt);
}

// A tensor layout: a base shape and the view taken of it (applied alike on both devices).
struct Layout {
  std::string name;
  Shape base;
  std::function<Tensor(const Tensor&)> view;
};

Tensor same(const Tensor& t) { return t; }

// Ten dims, permuted so that no two merge: more than one strided launch carries.
Tensor reversed_dims(const Tensor& t) { return kernels::permute(t, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}); }

const std::vector<Layout>& unary_layouts() {
  static const std::vector<Layout> layouts = {
      {"0-d", {}, same},
      {"one", {1}, same},
      {"seven", {7}, same},
      {"1023", {1023}, same},
      {"4097", {4097}, same},
      {"64x1000", {64, 1000}, same},
      {"large", {(1 << 20) + 3}, same},
      {"transposed", {33, 65}, [](const Tensor& t) { return kernels::transpose(t, 0, 1); }},
      {"stepped slice", {9, 40}, [](const Tensor& t) { return kernels::slice(t, 1, 1, 40, 3); }},
      {"misaligned", {4098}, [](const Tensor& t) { return kernels::slice(t, 0, 1, 4098); }},
      {"broadcast", {5, 1}, [](const Tensor& t) { return kernels::expand(t, {5, 9}); }},
      {"empty", {3, 0}, same},
      {"ten dims", {2, 2, 2, 2, 2, 2, 2, 2, 2, 3}, reversed_dims},
  };
  return layouts;
}

// Pairs of broadcast-compatible layouts for the binary ops.
const std::vector<std::pair<Layout, Layout>>& binary_layouts() {
  static const std::vector<std::pair<Layout, Layout>> pairs = {
      {{"4097", {4097}, same}, {"4097", {4097}, same}},
      {{"column", {7, 1}, same}, {"row", {1, 13}, same}},
      {{"0-d", {}, same}, {"1023", {1023}, same}},
      {{"transposed", {65, 33}, [](const Tensor& t) { return kernels::transpose(t, 0, 1); }},
       {"contiguous", {33, 65}, same}},
      {{"stepped slice", {9, 40}, [](const Tensor& t) { return kernels::slice(t, 1, 1, 40, 3); }},
       {"row", {13}, same}},
      {{"misaligned", {1024}, [](const Tensor& t) { return kernels::slice(t, 0, 1, 1024); }},
       {"aligned", {1023}, same}},
      {{"64x1000", {64, 1000}, same}, {"row", {1000}, same}},
      {{"empty", {0, 3}, same}, {"row", {3}, same}},
      {{"ten dims", {2, 2, 2, 2, 2, 2, 2, 2, 2, 3}, reversed_dims},
       {"contiguous", {3, 2, 2, 2, 2, 2, 2, 2, 2, 2}, same}},
  };
  return pairs;
}

// The CUDA result must sit on cuda:0 and equal the CPU one: exactly unless `float_rtol` applies (floating
// results), NaN matching NaN and infinities matching in sign.
::testing::AssertionResult matches(const Tensor& gpu, const Tensor& cpu, double float_rtol) {
  if (gpu.device() != kGpu) return ::testing::AssertionFailure() << "result on " << gpu.device().str();
  if (gpu.dtype() != cpu.dtype())
    return ::testing::AssertionFailure() << "dtype " << dtype_name(gpu.dtype()) << " vs " << dtype_name(cpu.dtype());
  if (!is_floating(cpu.dtype())) return all_close(gpu, cpu, 0, 0);
  return all_close(gpu, cpu, float_rtol * 1e-1, float_rtol);
}

double float_tol(DType dt) { return dt == DType::Float32 ? 2e-6 : 1e-14; }

// lgamma, digamma and trigamma: CUDA's lgamma is documented within a few ulp only outside (−11.0001, −2.2637)
// (larger inside, where these inputs reach), and the polygammas sum many terms each carrying CUDA's log/tan/sin
// rounding; their values are checked against torch and mpmath on the CPU (tests/tensor/special_functions_test.cpp).
double unary_tol(UnaryOp op, DType dt) {
  const bool special = op == UnaryOp::Lgamma || op == UnaryOp::Digamma || op == UnaryOp::Trigamma;
  if (!special) return float_tol(dt);
  return dt == DType::Float32 ? 1e-4 : 1e-11;
}

// polygamma sums up to a dozen terms (more for negative arguments, where they cancel near its zeros), each
// rounded differently when nvcc fuses a multiply and an add: the special functions' tolerance. Its values are
// checked against torch on the CPU (tests/tensor/special_functions_test.cpp).
double scalar_tol(ScalarOp op, DType dt) {
  if (op != ScalarOp::Polygamma) return float_tol(dt);
  return dt == DType::Float32 ? 1e-4 : 1e-11;
}

// The message of the rematch::Error f throws ("" when it does not throw).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Whether the table row of `op` (tensor/elementwise_ops.h) takes dtype dt.
template <typename Op> bool takes(Op op, DType dt) {
  return kernels::accepts_dtype(kernels::op_info(op).accepts, dt);
}

// `message` with each "cuda:0" (the operands' device, which refusals name) read as "cpu".
std::string on_the_cpu(std::string message) {
  for (size_t at = message.find("cuda:0"); at != std::string::npos; at = message.find("cuda:0", at))
    message.replace(at, 6, "cpu");
  return message;
}

// An op refused on the CPU is refused on CUDA with the same message (but for the device it names): always for a
// bool-only op, otherwise when there is something to compute.
template <typename Op> void expect_same_refusal(Op op, int64_t numel, const std::function<void()>& on_cpu,
                                                const std::function<void()>& on_gpu) {
  const std::string want = error_of(on_cpu);
  EXPECT_EQ(want.empty(), numel == 0 && kernels::op_info(op).accepts != kernels::Accepts::Bool);
  EXPECT_EQ(on_the_cpu(error_of(on_gpu)), want);
}

// Every unary op of the table in every dtype: its result where its row takes the dtype, its refusal otherwise.
TEST(CudaElementwise, UnaryMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : kAll)
    for (const Layout& l : unary_layouts()) {
      const Tensor base = values(l.base, dt, dt == DType::Bool ? 2 : 1);
      const Tensor x = l.view(base), xg = l.view(kernels::to_device(base, kGpu));
      for (UnaryOp op : kernels::kUnaryOps) {
        SCOPED_TRACE(std::string(kernels::op_name(op)) + " " + dtype_name(dt) + " " + l.name);
        if (!takes(op, dt)) {
          expect_same_refusal(op, x.numel(), [&] { kernels::unary(op, x); }, [&] { kernels::unary(op, xg); });
          continue;
        }
        EXPECT_TRUE(matches(kernels::unary(op, xg), kernels::unary(op, x), unary_tol(op, dt)));
      }
    }
}

TEST(CudaElementwise, ScalarOpsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : kAll) {
    // Scalars that convert to every dtype without overflow (the CPU converts s to the element type first);
    // 2 and 0.5 take pow's exact paths, NaN the comparisons' and clamps' NaN cases.
    std::vector<double> scalars = {2.0, 0.5, 3.0, 1.7};
    if (dt != DType::UInt8) scalars.push_back(-1.5);
    if (is_floating(dt)) scalars.push_back(std::nan(""));
    for (const Layout& l : unary_layouts()) {
      const Tensor base = values(l.base, dt, 3);
      const Tensor x = l.view(base), xg = l.view(kernels::to_device(base, kGpu));
      for (ScalarOp op : kernels::kScalarOps)
        for (double s : scalars) {
          SCOPED_TRACE(std::string(kernels::op_name(op)) + " " + dtype_name(dt) + " " + l.name + " s=" +
                       std::to_string(s));
          if (!takes(op, dt)) {
            expect_same_refusal(op, x.numel(), [&] { kernels::scalar_op(op, x, s); },
                                [&] { kernels::scalar_op(op, xg, s); });
            continue;
          }
          EXPECT_TRUE(matches(kernels::scalar_op(op, xg, s), kernels::scalar_op(op, x, s), scalar_tol(op, dt)));
        }
    }
  }
}

TEST(CudaElementwise, BinaryOpsMatchCpuWithBroadcasting) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : kAll)
    for (const auto& [la, lb] : binary_layouts()) {
      const bool is_bool = dt == DType::Bool;
      const Tensor base_a = values(la.base, dt, is_bool ? 6 : 4), base_b = values(lb.base, dt, is_bool ? 7 : 5);
      const Tensor a = la.view(base_a), b = lb.view(base_b);
      const Tensor ag = la.view(kernels::to_device(base_a, kGpu)), bg = lb.view(kernels::to_device(base_b, kGpu));
      const int64_t numel = shape_numel(broadcast_shapes(a.sizes(), b.sizes(), "test"));
      for (BinaryOp op : kernels::kBinaryOps) {
        SCOPED_TRACE(std::string(kernels::op_name(op)) + " " + dtype_name(dt) + " " + la.name + " with " + lb.name);
        if (!takes(op, dt)) {
          expect_same_refusal(op, numel, [&] { kernels::binary(op, a, b); }, [&] { kernels::binary(op, ag, bg); });
          continue;
        }
        EXPECT_TRUE(matches(kernels::binary(op, ag, bg), kernels::binary(op, a, b), float_tol(dt)));
        EXPECT_TRUE(matches(kernels::binary(op, bg, ag), kernels::binary(op, b, a), float_tol(dt)));
      }
    }
}

TEST(CudaElementwise, WhereMatchesCpuForEveryDtype) {
  SKIP_WITHOUT_CUDA();
  const Tensor cond_base = values({7, 1, 13}, DType::Bool, 8);
  for (DType dt : kAll) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor a = values({5, 13}, dt, 9), b = values({}, dt, 10);
    const Tensor c = kernels::transpose(kernels::expand(cond_base, {7, 5, 13}), 1, 2);  // [7, 13, 5]
    const Tensor at = kernels::transpose(a, 0, 1);                                        // [13, 5]
    const Tensor cg = kernels::transpose(kernels::expand(kernels::to_device(cond_base, kGpu), {7, 5, 13}), 1, 2);
    const Tensor atg = kernels::transpose(kernels::to_device(a, kGpu), 0, 1);
    const Tensor bg = kernels::to_device(b, kGpu);
    EXPECT_TRUE(matches(kernels::where(cg, atg, bg), kernels::where(c, at, b), 0));
    EXPECT_TRUE(matches(kernels::where(cg, bg, atg), kernels::where(c, b, at), 0));
    // Contiguous operands of one shape: the vector path.
    const Tensor x = values({4097}, dt, 11), y = values({4097}, dt, 12), m = values({4097}, DType::Bool, 13);
    EXPECT_TRUE(matches(kernels::where(kernels::to_device(m, kGpu), kernels::to_device(x, kGpu),
                                       kernels::to_device(y, kGpu)),
                        kernels::where(m, x, y), 0));
    EXPECT_EQ(kernels::where(kernels::to_device(values({0, 1, 13}, DType::Bool, 1), kGpu),
                             kernels::to_device(a, kGpu), bg)
                  .sizes(),
              (Shape{0, 5, 13}));
  }
}

// Views of a destination: fills and copies write through them, and the whole base is compared afterwards so
// that elements outside the view must stay untouched.
const std::vector<Layout>& destination_layouts() {
  static const std::vector<Layout> layouts = {
      {"contiguous", {33, 65}, same},
      {"4097", {4097}, same},
      {"0-d", {}, same},
      {"transposed", {65, 33}, [](const Tensor& t) { return kernels::transpose(t, 0, 1); }},
      {"stepped slice", {9, 40}, [](const Tensor& t) { return kernels::slice(t, 1, 1, 40, 3); }},
      {"misaligned", {4098}, [](const Tensor& t) { return kernels::slice(t, 0, 1, 4098); }},
      {"diagonal", {12, 12}, [](const Tensor& t) { return kernels::as_strided(t, {12}, {13}, 0); }},
      {"ten dims", {2, 2, 2, 2, 2, 2, 2, 2, 2, 3}, reversed_dims},
      {"empty", {4, 0}, same},
  };
  return layouts;
}

TEST(CudaElementwise, FillWritesOnlyTheView) {
  SKIP_WITHOUT_CUDA();
  for (DType dt : kAll) {
    std::vector<double> fills = {1.0, 7.0, 2.5};
    if (dt != DType::UInt8) fills.push_back(-1.0);
    if (is_floating(dt)) fills.insert(fills.end(), {std::nan(""), -INFINITY, -0.0});
    for (const Layout& l : destination_layouts())
      for (double v : fills) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " " + l.name + " value " + std::to_string(v));
        const Tensor cpu = zeros(l.base, dt), gpu = zeros(l.base, dt, kGpu);
        kernels::fill_(l.view(cpu), v);
        kernels::fill_(l.view(gpu), v);
        EXPECT_TRUE(matches(gpu, cpu, 0));
      }
    // Creation goes through fill_ too.
    EXPECT_TRUE(matches(full({3, 5}, 3.0, dt, kGpu), full({3, 5}, 3.0, dt), 0));
    EXPECT_TRUE(matches(ones({}, dt, kGpu), ones({}, dt), 0));
  }
}

// A source of `shape` on `device`, read through a broadcast row (2-D shapes) or a permutation (all others),
// holding values every conversion from `from` to `to` defines: no NaN or inf into integers or bool, no
// negatives into uint8.
Tensor copy_source(const Shape& shape, DType from, DType to, Device device) {
  const bool two_d = shape.size() == 2;
  Tensor base = values(two_d ? Shape{shape[1]} : Shape(shape.rbegin(), shape.rend()), from, 14);
  if (from != DType::Bool && !(is_floating(from) && is_floating(to))) {
    base = kernels::scalar_op(ScalarOp::Mul, kernels::unary(UnaryOp::Abs, base), 5.0);
    if (is_floating(from)) base = kernels::where(kernels::unary(UnaryOp::IsFinite, base), base, zeros({}, from));
  }
  base = kernels::to_device(base, device);
  if (two_d) return base;  // copy_ broadcasts it over the rows
  std::vector<int64_t> order;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) order.push_back(d);
  return kernels::permute(base, order);
}

TEST(CudaElementwise, CopyConvertsEveryDtypePairThroughAnyStrides) {
  SKIP_WITHOUT_CUDA();
  for (DType from : kAll)
    for (DType to : kAll)
      for (const Layout& l : destination_layouts()) {
        SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to) + " into " + l.name);
        const Tensor cpu = zeros(l.base, to), gpu = zeros(l.base, to, kGpu);
        const Tensor view = l.view(cpu), view_gpu = l.view(gpu);
        kernels::copy_(view, copy_source(view.sizes(), from, to, Device::cpu()));
        kernels::copy_(view_gpu, copy_source(view.sizes(), from, to, kGpu));
        EXPECT_TRUE(matches(gpu, cpu, 0));
      }
}

TEST(CudaElementwise, CopyBetweenDevicesAndContiguousSameDtype) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = values({37, 41}, DType::Float32, 16);
  const Tensor xg = kernels::to_device(x, kGpu);
  EXPECT_TRUE(matches(kernels::clone(xg), x, 0));                       // device-to-device memcpy
  EXPECT_TRUE(matches(kernels::contiguous(kernels::transpose(xg, 0, 1)),
                      kernels::contiguous(kernels::transpose(x, 0, 1)), 0));
  EXPECT_TRUE(matches(kernels::cast(xg, DType::Float64), kernels::cast(x, DType::Float64), 0));
  // Host source into a strided device view, and a strided device view into a host tensor.
  Tensor dst = zeros({41, 37}, DType::Float64, kGpu), want = zeros({41, 37}, DType::Float64);
  kernels::copy_(kernels::transpose(dst, 0, 1), x);
  kernels::copy_(kernels::transpose(want, 0, 1), x);
  EXPECT_TRUE(matches(dst, want, 0));
  Tensor host = zeros({41, 37}, DType::Int32);
  kernels::copy_(host, kernels::transpose(xg, 0, 1));
  EXPECT_TRUE(all_close(host, kernels::cast(kernels::transpose(x, 0, 1), DType::Int32), 0, 0));
  // Copying a tensor onto itself changes nothing.
  kernels::copy_(xg, xg);
  EXPECT_TRUE(matches(xg, x, 0));
}

// Between two devices the copy runs on the destination's stream (tensor/cuda/runtime.cu): it must still wait
// for the exp that cuda:0's stream may be running on the source, and the source may be freed at once.
TEST(CudaElementwise, CopyToAnotherDeviceWaitsForTheSource) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  const Tensor x = test::random_tensor({4096, 4096}, DType::Float32, 17);
  Tensor moved;
  {
    const Tensor on_0 = kernels::unary(UnaryOp::Exp, kernels::to_device(x, kGpu));
    moved = kernels::to_device(on_0, Device::cuda(1));
  }
  EXPECT_TRUE(all_close(kernels::to_device(moved, Device::cpu()), kernels::unary(UnaryOp::Exp, x), 2e-7,
                        float_tol(DType::Float32)));
}

// More than 2^31 - 1 elements in a strided view: the launch is cut into 32-bit pieces. Fill the transposed
// view of a [2^30 + 3, 2] byte tensor (2 GiB), then check every element through min and max. The suite name
// ends in "Large": tools/gpu_check.sh runs it in its own step, not under compute-sanitizer.
TEST(CudaElementwiseLarge, StridedOpsBeyond32BitIndexing) {
  SKIP_WITHOUT_CUDA();
  const int64_t rows = (int64_t{1} << 30) + 3;
  Tensor big;
  try {
    big = zeros({rows, 2}, DType::UInt8, kGpu);
  } catch (const Error& e) {
    GTEST_SKIP() << "not enough device memory for a 2 GiB tensor: " << e.what();
  }
  const Tensor t = kernels::transpose(big, 0, 1);
  kernels::fill_(t, 7.0);
  EXPECT_EQ(kernels::reduce(kernels::ReduceOp::Min, big, {}, false).item<int64_t>(), 7);
  EXPECT_EQ(kernels::reduce(kernels::ReduceOp::Max, big, {}, false).item<int64_t>(), 7);
  const Tensor sum = kernels::binary(BinaryOp::Add, t, kernels::transpose(big, 0, 1));
  EXPECT_EQ(kernels::reduce(kernels::ReduceOp::Min, sum, {}, false).item<int64_t>(), 14);
  EXPECT_EQ(kernels::reduce(kernels::ReduceOp::Max, sum, {}, false).item<int64_t>(), 14);
  EXPECT_EQ(kernels::slice(sum, 1, rows - 2, rows).to_vector<int64_t>(), (std::vector<int64_t>{14, 14, 14, 14}));
}

}  // namespace
}  // namespace rematch
