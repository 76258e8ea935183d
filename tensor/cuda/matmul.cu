// CUDA matrix products through cuBLAS, the counterpart of tensor/cpu/matmul.cpp. cuBLAS is column-major, and
// a row-major matrix read as column-major is its transpose: the row-major C = A·B is the column-major
// Cᵀ = Bᵀ·Aᵀ, so every call passes B first and swaps n and m. Under that reading a row-major operand already
// is the transpose the product needs (CUBLAS_OP_N) and a transposed view, i.e. a column-major matrix, needs
// CUBLAS_OP_T; either keeps its own leading dimension, so only operands that are neither (expanded or sliced
// in both dims) are copied.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <vector>

#include "tensor/cuda/check.h"
#include "tensor/cuda/cublas_check.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/runtime.h"

namespace rematch::cuda {
namespace {

// Read once, at first use, from REMATCH_ALLOW_TF32; set_allow_tf32 overrides it.
std::atomic<bool>& tf32_flag() {
  static std::atomic<bool> flag{[] {
    const char* v = std::getenv("REMATCH_ALLOW_TF32");
    return v != nullptr && v[0] == '1';
  }()};
  return flag;
}

struct HandleSlot {
  std::once_flag once;
  cublasHandle_t handle = nullptr;
};

// One handle per device, created on first use and bound to the device's stream, so cuBLAS work is ordered
// with every other kernel of that device. Handles live until the process ends: destroying them from a static
// destructor could run after the CUDA runtime has already been torn down. matmul_typed sets the handle's math
// mode before each product, which is safe because one host thread at a time drives a device
// (tensor/cuda/runtime.h); set_allow_tf32 itself may be called from any thread.
cublasHandle_t handle(int device) {
  cudaStream_t s = stream(device);  // validates `device` before it indexes the slots
  static std::vector<HandleSlot> slots(static_cast<size_t>(std::max(device_count(), 1)));
  HandleSlot& slot = slots[static_cast<size_t>(device)];
  std::call_once(slot.once, [&] {
    REMATCH_CUDA_CHECK(cudaSetDevice(device));
    REMATCH_CUBLAS_CHECK(cublas().create(&slot.handle));
    REMATCH_CUBLAS_CHECK(cublas().set_stream(slot.handle, s));
  });
  return slot.handle;
}

// One operand as cuBLAS sees it: batch entry i is the matrix at base + i * batch_stride (0 when broadcast).
struct GemmOperand {
  Tensor keep;  // the tensor `base` points into (a contiguous copy when the view did not fit cuBLAS)
  const void* base = nullptr;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 0;
  int64_t batch_stride = 0;  // in elements
};

// How cuBLAS can read a rows x cols row-major-indexed matrix with element strides (rs, cs): row-major
// (CUBLAS_OP_N, ld = rs) or column-major (CUBLAS_OP_T, ld = cs); the same rule as the CPU's blas_layout.
// Size-1 dims have meaningless strides, so they do not constrain the choice. False when neither fits.
bool gemm_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, cublasOperation_t& op, int64_t& ld) {
  if (cs == 1 || cols == 1) {
    if (rows == 1 || rs >= std::max<int64_t>(cols, 1)) {
      op = CUBLAS_OP_N;
      ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
      return true;
    }
  }
  if (rs == 1 || rows == 1) {
    if (cols == 1 || cs >= std::max<int64_t>(rows, 1)) {
      op = CUBLAS_OP_T;
      ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
      return true;
    }
  }
  return false;
}

GemmOperand prepare(const Tensor& t) {
  GemmOperand g;
  g.keep = t;
  if (!gemm_layout(t.size(-2), t.size(-1), t.stride(-2), t.stride(-1), g.op, g.ld)) {
    g.keep = kernels::contiguous(t);
    gemm_layout(t.size(-2), t.size(-1), g.keep.stride(-2), g.keep.stride(-1), g.op, g.ld);
  }
  g.base = g.keep.raw_data();
  g.batch_stride = (t.dim() == 3 && t.size(0) > 1) ? g.keep.stride(0) : 0;
  return g;
}

int cublas_int(int64_t v, const char* what, const Tensor& a, const Tensor& b) {
  REMATCH_CHECK(v <= INT_MAX, "matmul: ", what, " ", v, " exceeds the cuBLAS integer range for ", a.describe(),
                " x ", b.describe());
  return static_cast<int>(v);
}

template <typename T>
void matmul_typed(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int device = out.device().index;
  cublasHandle_t h = handle(device);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  // Only float32 products are affected: TF32 math mode leaves double-precision gemm alone.
  REMATCH_CUBLAS_CHECK(
      cublas().set_math_mode(h, tf32_flag().load() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  const int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  const int64_t batch = out.dim() == 3 ? out.size(0) : 1;
  const GemmOperand A = prepare(a), B = prepare(b);
  const T* pa = static_cast<const T*>(A.base);
  const T* pb = static_cast<const T*>(B.base);
  T* pc = static_cast<T*>(out.raw_data());
  const T one = 1, zero = 0;
  const int M = cublas_int(m, "columns", a, b), K = cublas_int(k, "inner size", a, b);
  const int LDA = cublas_int(A.ld, "leading dim", a, b), LDB = cublas_int(B.ld, "leading dim", a, b);
  // A batch of row-major A_i stacked without gaps times one shared B is a single [batch·n, k] x [k, m]
  // product whose result is exactly out's layout: one large gemm instead of a batched call.
  const bool fold = batch > 1 && B.batch_stride == 0 && A.op == CUBLAS_OP_N && A.batch_stride == n * A.ld &&
                    batch * n <= INT_MAX;
  if (batch == 1 || fold) {
    const int N = cublas_int(batch * n, "rows", a, b);
    if constexpr (std::is_same_v<T, float>)
      REMATCH_CUBLAS_CHECK(cublas().sgemm(h, B.op, A.op, M, N, K, &one, pb, LDB, pa, LDA, &zero, pc, M));
    else
      REMATCH_CUBLAS_CHECK(cublas().dgemm(h, B.op, A.op, M, N, K, &one, pb, LDB, pa, LDA, &zero, pc, M));
    return;
  }
  const int N = cublas_int(n, "rows", a, b), count = cublas_int(batch, "batch size", a, b);
  const long long sa = A.batch_stride, sb = B.batch_stride, sc = n * m;
  if constexpr (std::is_same_v<T, float>)
    REMATCH_CUBLAS_CHECK(cublas().sgemm_strided_batched(h, B.op, A.op, M, N, K, &one, pb, LDB, sb, pa, LDA, sa,
                                                        &zero, pc, M, sc, count));
  else
    REMATCH_CUBLAS_CHECK(cublas().dgemm_strided_batched(h, B.op, A.op, M, N, K, &one, pb, LDB, sb, pa, LDA, sa,
                                                        &zero, pc, M, sc, count));
}

}  // namespace

void matmul(const Tensor& out, const Tensor& a, const Tensor& b) {
  // An empty inner product is 0; all-zero bytes are 0.0 in both float types, and out is fresh contiguous.
  if (a.size(-1) == 0) {
    const int device = out.device().index;
    cudaStream_t s = stream(device);
    REMATCH_CUDA_CHECK(cudaSetDevice(device));
    REMATCH_CUDA_CHECK(
        cudaMemsetAsync(out.raw_data(), 0, static_cast<size_t>(out.numel()) * dtype_size(out.dtype()), s));
    return;
  }
  dispatch_float("matmul", out.dtype(), [&](auto tag) { matmul_typed<typename decltype(tag)::type>(out, a, b); });
}

void set_allow_tf32(bool allow) { tf32_flag().store(allow); }

bool allow_tf32() { return tf32_flag().load(); }

}  // namespace rematch::cuda
