// CUDA matmul (tensor/cuda/matmul.cu) against the CPU result of the same inputs: 2-D and batched products at
// odd sizes, transposed views (CUBLAS_OP_T), views with a wider leading dim, views cuBLAS cannot read (copied),
// broadcast batches (stride 0) and the folded batch × shared matrix, empty dims, and TF32 on and off.
// Skipped without a CUDA device.
#include <functional>
#include <tuple>
#include <vector>

#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/runtime.h"
#include "test_util.h"

namespace rematch {
namespace {

using test::all_close;
using test::random_tensor;

Tensor on_gpu(const Tensor& t) { return kernels::to_device(t, Device::cuda(0)); }
Tensor on_cpu(const Tensor& t) { return kernels::to_device(t, Device::cpu()); }
Tensor same(const Tensor& t) { return t; }

// float32 products must match the CPU to float32 rounding (TF32 off); float64 to double rounding.
double tolerance(DType dtype) { return dtype == DType::Float32 ? 1e-4 : 1e-12; }

// Each test starts with TF32 off and leaves the switch as it found it (REMATCH_ALLOW_TF32 may be set).
class CudaMatmul : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_CUDA();
    saved_ = cuda::allow_tf32();
    cuda::set_allow_tf32(false);
  }
  void TearDown() override {
    if (cuda::device_count() > 0) cuda::set_allow_tf32(saved_);
  }

  // matmul(view_a(a), view_b(b)) on cuda:0 against the same on the CPU, a and b made contiguous on the host.
  void expect_matches_cpu(const Tensor& a, const Tensor& b, const std::function<Tensor(const Tensor&)>& view_a,
                          const std::function<Tensor(const Tensor&)>& view_b, double atol, double rtol) {
    const Tensor want = kernels::matmul(view_a(a), view_b(b));
    const Tensor got = kernels::matmul(view_a(on_gpu(a)), view_b(on_gpu(b)));
    ASSERT_TRUE(got.device().is_cuda());
    EXPECT_EQ(got.sizes(), want.sizes());
    EXPECT_TRUE(all_close(on_cpu(got), want, atol, rtol))
        << view_a(a).describe() << " x " << view_b(b).describe();
  }
  void expect_matches_cpu(const Tensor& a, const Tensor& b) {
    const double tol = tolerance(a.dtype());
    expect_matches_cpu(a, b, same, same, tol, tol);
  }

  bool saved_ = false;
};

TEST_F(CudaMatmul, TwoDimensionalAtOddSizes) {
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes = {
      {1, 1, 1},      {7, 1, 129},    {1, 129, 7},    {129, 7, 1},
      {7, 129, 1000}, {1000, 7, 129}, {129, 1000, 7}, {1000, 129, 1000}};
  uint32_t seed = 1;
  for (DType dtype : {DType::Float32, DType::Float64})
    for (const auto& [n, k, m] : shapes)
      expect_matches_cpu(random_tensor({n, k}, dtype, seed++), random_tensor({k, m}, dtype, seed++));
}

TEST_F(CudaMatmul, TransposedOperandsGoAsOpT) {
  auto t = [](const Tensor& x) { return kernels::transpose(x, -2, -1); };
  uint32_t seed = 10;
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const double tol = tolerance(dtype);
    const std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes = {{7, 129, 33}, {1, 7, 1}, {129, 1, 7}};
    for (const auto& [n, k, m] : shapes) {
      // Stored as [k, n] and [m, k], read through a transposed view.
      const Tensor at = random_tensor({k, n}, dtype, seed++), bt = random_tensor({m, k}, dtype, seed++);
      const Tensor a = random_tensor({n, k}, dtype, seed++), b = random_tensor({k, m}, dtype, seed++);
      expect_matches_cpu(at, b, t, same, tol, tol);
      expect_matches_cpu(a, bt, same, t, tol, tol);
      expect_matches_cpu(at, bt, t, t, tol, tol);
    }
  }
}

TEST_F(CudaMatmul, ViewsWithWiderLeadingDimAndCopiedViews) {
  const double tol = tolerance(DType::Float32);
  // Column slices keep unit column stride with a row stride wider than the row: read in place.
  auto cols = [](const Tensor& x) { return kernels::narrow(x, 1, 3, x.size(1) - 5); };
  expect_matches_cpu(random_tensor({33, 136}, DType::Float32, 20), random_tensor({131, 7}, DType::Float32, 21),
                     cols, same, tol, tol);
  expect_matches_cpu(random_tensor({33, 7}, DType::Float32, 22), random_tensor({7, 134}, DType::Float32, 23), same,
                     cols, tol, tol);
  // Stepped in both dims (neither row- nor column-major) and an expanded operand: cuBLAS gets a copy.
  auto stepped = [](const Tensor& x) {
    return kernels::slice(kernels::slice(x, 0, 0, x.size(0), 2), 1, 0, x.size(1), 2);
  };
  expect_matches_cpu(random_tensor({14, 258}, DType::Float32, 24), random_tensor({258, 14}, DType::Float32, 25),
                     stepped, stepped, tol, tol);
  auto expanded = [](const Tensor& x) { return kernels::expand(x, {129, x.size(1)}); };
  expect_matches_cpu(random_tensor({1, 7}, DType::Float32, 26), random_tensor({7, 5}, DType::Float32, 27), expanded,
                     same, tol, tol);
}

TEST_F(CudaMatmul, BatchedWithBroadcastBatches) {
  uint32_t seed = 30;
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const int64_t B = 7, n = 33, k = 129, m = 17;
    expect_matches_cpu(random_tensor({B, n, k}, dtype, seed++), random_tensor({B, k, m}, dtype, seed++));
    expect_matches_cpu(random_tensor({1, n, k}, dtype, seed++), random_tensor({B, k, m}, dtype, seed++));
    expect_matches_cpu(random_tensor({B, n, k}, dtype, seed++), random_tensor({1, k, m}, dtype, seed++));
    expect_matches_cpu(random_tensor({n, k}, dtype, seed++), random_tensor({B, k, m}, dtype, seed++));
    // Batch × one shared matrix: folded into a single [B·n, k] x [k, m] gemm.
    expect_matches_cpu(random_tensor({B, n, k}, dtype, seed++), random_tensor({k, m}, dtype, seed++));
    expect_matches_cpu(random_tensor({1000, 1, 7}, dtype, seed++), random_tensor({7, 1}, dtype, seed++));
    expect_matches_cpu(random_tensor({1, 1, 1}, dtype, seed++), random_tensor({1, 1, 1}, dtype, seed++));
  }
}

TEST_F(CudaMatmul, BatchedViews) {
  const double tol = tolerance(DType::Float32);
  const int64_t B = 5, n = 7, k = 129, m = 9;
  // Transposed last two dims of every batch entry: strided-batched with CUBLAS_OP_T.
  auto t = [](const Tensor& x) { return kernels::transpose(x, 1, 2); };
  expect_matches_cpu(random_tensor({B, k, n}, DType::Float32, 40), random_tensor({B, m, k}, DType::Float32, 41), t, t,
                     tol, tol);
  // [n, B, k] permuted to [B, n, k]: row stride B·k, batch stride k; not foldable.
  auto batch_inside = [](const Tensor& x) { return kernels::permute(x, {1, 0, 2}); };
  expect_matches_cpu(random_tensor({n, B, k}, DType::Float32, 42), random_tensor({k, m}, DType::Float32, 43),
                     batch_inside, same, tol, tol);
  // A batch expanded from one matrix has batch stride 0 though its batch size is B.
  auto expanded = [](const Tensor& x) { return kernels::expand(x, {5, x.size(1), x.size(2)}); };
  expect_matches_cpu(random_tensor({1, n, k}, DType::Float32, 44), random_tensor({B, k, m}, DType::Float32, 45),
                     expanded, same, tol, tol);
  expect_matches_cpu(random_tensor({B, n, k}, DType::Float32, 46), random_tensor({1, k, m}, DType::Float32, 47), same,
                     expanded, tol, tol);
}

TEST_F(CudaMatmul, EmptyDims) {
  // k = 0: an empty sum, all zeros.
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor z = kernels::matmul(on_gpu(random_tensor({7, 0}, dtype)), on_gpu(random_tensor({0, 5}, dtype)));
    EXPECT_EQ(z.sizes(), (Shape{7, 5}));
    EXPECT_TRUE(test::values_equal(on_cpu(z), std::vector<double>(35, 0.0)));
    const Tensor zb = kernels::matmul(on_gpu(random_tensor({3, 2, 0}, dtype)), on_gpu(random_tensor({0, 4}, dtype)));
    EXPECT_EQ(zb.sizes(), (Shape{3, 2, 4}));
    EXPECT_TRUE(test::values_equal(on_cpu(zb), std::vector<double>(24, 0.0)));
  }
  // n, m or the batch = 0: an empty result.
  EXPECT_EQ(kernels::matmul(on_gpu(random_tensor({0, 7})), on_gpu(random_tensor({7, 5}))).sizes(), (Shape{0, 5}));
  EXPECT_EQ(kernels::matmul(on_gpu(random_tensor({7, 3})), on_gpu(random_tensor({3, 0}))).sizes(), (Shape{7, 0}));
  EXPECT_EQ(kernels::matmul(on_gpu(random_tensor({0, 2, 3})), on_gpu(random_tensor({3, 4}))).sizes(),
            (Shape{0, 2, 4}));
}

TEST_F(CudaMatmul, Tf32IsASwitch) {
  EXPECT_FALSE(cuda::allow_tf32());
  cuda::set_allow_tf32(true);
  EXPECT_TRUE(cuda::allow_tf32());
  // TF32 keeps 10 mantissa bits of each float32 input: about 1e-3 relative per product, so a loose tolerance.
  expect_matches_cpu(random_tensor({129, 512}, DType::Float32, 50), random_tensor({512, 65}, DType::Float32, 51),
                     same, same, 5e-2, 1e-2);
  expect_matches_cpu(random_tensor({7, 33, 256}, DType::Float32, 52), random_tensor({256, 9}, DType::Float32, 53),
                     same, same, 5e-2, 1e-2);
  // float64 products ignore the switch.
  expect_matches_cpu(random_tensor({33, 129}, DType::Float64, 54), random_tensor({129, 7}, DType::Float64, 55), same,
                     same, 1e-12, 1e-12);
  cuda::set_allow_tf32(false);
  EXPECT_FALSE(cuda::allow_tf32());
  expect_matches_cpu(random_tensor({129, 512}, DType::Float32, 50), random_tensor({512, 65}, DType::Float32, 51));
}

}  // namespace
}  // namespace rematch
