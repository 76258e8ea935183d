// CUDA fused row ops: softmax, log_softmax, their backwards and the p-norm normalisations, the device twins of
// tensor/cpu/softmax.cpp. The contiguous input is viewed as [outer, n, inner] around the reduced dim of size n.
// Every op has the same shape: (softmax only) m = max of the lane, s = sum over the lane of term(x, g, m),
// c = finish(s, m), then y = map(x, g, m, c) for each element. Kernels:
//  - inner == 1 (the reduced dim is last): blockDim.x threads share one row (strided, coalesced loads) and
//    blockDim.y rows share a block; warp shuffles (and shared memory across warps) combine the row.
//  - inner > 1: the outer * inner lanes, flattened, are spread over blockDim.x with blockDim.y threads walking
//    each lane; shared memory combines a lane's threads. No transpose copy is needed.
// The max ignores NaN and the sum then turns a NaN anywhere in the lane into NaN for the whole lane, as on the
// CPU; a lane of all -inf (or one holding +inf) comes out NaN there too. Sums accumulate in the element type,
// as on the CPU.
#include <algorithm>
#include <limits>

#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/device_math.cuh"
#include "tensor/cuda/strided.cuh"

namespace rematch::cuda {
namespace {

using strided::ceil_div;
using strided::kBlockThreads;
using strided::kMaxGroups;
using strided::kMaxRowThreads;

using namespace device_math;

// Partial maxima never hold NaN (the per-thread scan skips it), so a plain comparison combines them.
template <typename T> struct MaxCombine {
  __device__ T combine(T a, T b) const { return b > a ? b : a; }
};
template <typename T> struct SumCombine {
  __device__ T combine(T a, T b) const { return a + b; }
};

// ---- the ops (x is y for the backwards; g the incoming gradient where kUsesGrad) -------------------------------
template <typename T, bool kLog> struct SoftmaxOp {
  static constexpr bool kNeedsMax = true;
  static constexpr bool kUsesGrad = false;
  __device__ T term(T x, T, T m) const { return exp_of(x - m); }
  __device__ T finish(T s, T m) const { return kLog ? m + log_of(s) : T(1) / s; }
  __device__ T map(T x, T, T m, T c) const { return kLog ? x - c : exp_of(x - m) * c; }
};

// y * (g - sum(g * y))
template <typename T> struct SoftmaxBackwardOp {
  static constexpr bool kNeedsMax = false;
  static constexpr bool kUsesGrad = true;
  __device__ T term(T y, T g, T) const { return g * y; }
  __device__ T finish(T s, T) const { return s; }
  __device__ T map(T y, T g, T, T c) const { return y * (g - c); }
};

// g - exp(y) * sum(g)
template <typename T> struct LogSoftmaxBackwardOp {
  static constexpr bool kNeedsMax = false;
  static constexpr bool kUsesGrad = true;
  __device__ T term(T, T g, T) const { return g; }
  __device__ T finish(T s, T) const { return s; }
  __device__ T map(T y, T g, T, T c) const { return g - exp_of(y) * c; }
};

// x / (sum|x| + eps)
template <typename T> struct L1NormalizeOp {
  static constexpr bool kNeedsMax = false;
  static constexpr bool kUsesGrad = false;
  T eps;
  __device__ T term(T x, T, T) const { return abs_of(x); }
  __device__ T finish(T s, T) const { return T(1) / (s + eps); }
  __device__ T map(T x, T, T, T c) const { return x * c; }
};

// x / (sqrt(sum x²) + eps)
template <typename T> struct L2NormalizeOp {
  static constexpr bool kNeedsMax = false;
  static constexpr bool kUsesGrad = false;
  T eps;
  __device__ T term(T x, T, T) const { return x * x; }
  __device__ T finish(T s, T) const { return T(1) / (sqrt_of(s) + eps); }
  __device__ T map(T x, T, T, T c) const { return x * c; }
};

template <typename Op, typename T> __device__ __forceinline__ T grad_at(const T* g, int64_t at) {
  if constexpr (Op::kUsesGrad) return g[at];
  else return T(0);
}

// ---- kernels ------------------------------------------------------------------------------------------------------
template <typename T, typename Op>
__global__ void __launch_bounds__(kMaxRowThreads)
    row_op_rows_kernel(const T* x, const T* g, T* y, int64_t rows, int64_t n, Op op) {
  __shared__ T smem[32];
  const int64_t groups = (rows + blockDim.y - 1) / blockDim.y;
  for (int64_t grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const int64_t row = grp * blockDim.y + threadIdx.y;
    const bool valid = row < rows;
    const int64_t base = row * n;
    T m = T(0);
    if constexpr (Op::kNeedsMax) {
      T local = -std::numeric_limits<T>::infinity();
      if (valid)
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) local = x[base + j] > local ? x[base + j] : local;
      m = strided::row_allreduce(local, MaxCombine<T>{}, smem);
    }
    T s = T(0);
    if (valid)
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += op.term(x[base + j], grad_at<Op>(g, base + j), m);
    s = strided::row_allreduce(s, SumCombine<T>{}, smem);
    const T c = op.finish(s, m);
    if (valid)
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        y[base + j] = op.map(x[base + j], grad_at<Op>(g, base + j), m, c);
  }
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kBlockThreads)
    row_op_columns_kernel(const T* x, const T* g, T* y, int64_t outer, int64_t n, int64_t inner, Op op) {
  __shared__ T smem[kBlockThreads];
  const int64_t lanes = outer * inner;
  const int64_t groups = (lanes + blockDim.x - 1) / blockDim.x;
  for (int64_t grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const int64_t q = grp * blockDim.x + threadIdx.x;
    const bool valid = q < lanes;
    const int64_t base = (q / inner) * n * inner + q % inner;  // element j of the lane is at base + j * inner
    T m = T(0);
    if constexpr (Op::kNeedsMax) {
      T local = -std::numeric_limits<T>::infinity();
      if (valid)
        for (int64_t j = threadIdx.y; j < n; j += blockDim.y) {
          const T v = x[base + j * inner];
          local = v > local ? v : local;
        }
      m = strided::column_allreduce(local, MaxCombine<T>{}, smem);
    }
    T s = T(0);
    if (valid)
      for (int64_t j = threadIdx.y; j < n; j += blockDim.y) {
        const int64_t at = base + j * inner;
        s += op.term(x[at], grad_at<Op>(g, at), m);
      }
    s = strided::column_allreduce(s, SumCombine<T>{}, smem);
    const T c = op.finish(s, m);
    if (valid)
      for (int64_t j = threadIdx.y; j < n; j += blockDim.y) {
        const int64_t at = base + j * inner;
        y[at] = op.map(x[at], grad_at<Op>(g, at), m, c);
      }
  }
}

// ---- launching ------------------------------------------------------------------------------------------------------
// y = op over the lanes of x (and g, when the op uses it) around `dim`; all contiguous, of x's shape.
template <typename T, typename Op>
void run_row_op(const char* name, const Tensor& out, const Tensor& x, const Tensor* g, int64_t dim, const Op& op) {
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.size(d);
    else if (d == dim) n = x.size(d);
    else inner *= x.size(d);
  }
  if (outer * n * inner == 0) return;
  const int device = x.device().index;
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t s = stream(device);
  const T* xp = static_cast<const T*>(x.raw_data());
  const T* gp = g ? static_cast<const T*>(g->raw_data()) : nullptr;
  T* yp = static_cast<T*>(out.raw_data());
  if (inner == 1) {
    const int bx = strided::row_threads(n);
    const int by = std::max(1, kBlockThreads / bx);
    const unsigned grid = static_cast<unsigned>(std::min(ceil_div(outer, by), kMaxGroups));
    row_op_rows_kernel<<<grid, dim3(bx, by), 0, s>>>(xp, gp, yp, outer, n, op);
  } else {
    const int64_t lanes = outer * inner;
    const int bx = strided::pow2_at_least(lanes, 32);
    const int by = kBlockThreads / bx;
    const unsigned grid = static_cast<unsigned>(std::min(ceil_div(lanes, bx), kMaxGroups));
    row_op_columns_kernel<<<grid, dim3(bx, by), 0, s>>>(xp, gp, yp, outer, n, inner, op);
  }
  REMATCH_CUDA_LAUNCH_CHECK(name);
}

}  // namespace

void softmax(const Tensor& out, const Tensor& x, int64_t dim, bool log) {
  dispatch_float("softmax", x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (log) run_row_op<T>("log_softmax", out, x, nullptr, dim, SoftmaxOp<T, true>{});
    else run_row_op<T>("softmax", out, x, nullptr, dim, SoftmaxOp<T, false>{});
  });
}

void softmax_backward(const Tensor& out, const Tensor& grad, const Tensor& y, int64_t dim, bool log) {
  dispatch_float("softmax_backward", y.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (log) run_row_op<T>("log_softmax_backward", out, y, &grad, dim, LogSoftmaxBackwardOp<T>{});
    else run_row_op<T>("softmax_backward", out, y, &grad, dim, SoftmaxBackwardOp<T>{});
  });
}

void lp_normalize(const Tensor& out, const Tensor& x, int64_t dim, int p, double eps) {
  dispatch_float("lp_normalize", x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T e = static_cast<T>(eps);
    if (p == 1) run_row_op<T>("lp_normalize", out, x, nullptr, dim, L1NormalizeOp<T>{e});
    else run_row_op<T>("lp_normalize", out, x, nullptr, dim, L2NormalizeOp<T>{e});
  });
}

}  // namespace rematch::cuda
