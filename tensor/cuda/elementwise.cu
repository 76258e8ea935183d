// CUDA unary, scalar, binary and where kernels over strided and broadcast views (tensor/cuda/strided.cuh runs
// the loops). The ops and their math are the table's (tensor/elementwise_ops.h) and the functors are the CPU's
// (tensor/elementwise_functors.h): the same comparisons and casts, NaN going where it goes there, the dtypes
// refused before either backend runs (tensor/elementwise.cpp). Only the transcendentals are CUDA's (expf, logf,
// ... within 1-4 ulp; float32 exp on the CPU is fast_expf), so float results agree to a few ulp; sqrt and
// division are IEEE-rounded on both.
#include <limits>

#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/device_math.cuh"
#include "tensor/cuda/strided.cuh"
#include "tensor/elementwise_dispatch.h"

namespace rematch::cuda {
namespace {

using kernels::BinaryOp;
using kernels::ScalarOp;
using kernels::UnaryOp;
using strided::launch_elementwise;

// CUDA's math policy for the functors of tensor/elementwise_functors.h.
struct CudaMath {
  template <typename T> __device__ static T exp(T v) { return device_math::exp_of(v); }
  template <typename T> __device__ static T log(T v) { return device_math::log_of(v); }
  template <typename T> __device__ static T log1p(T v) { return device_math::log1p_of(v); }
  template <typename T> __device__ static T sqrt(T v) { return device_math::sqrt_of(v); }
  template <typename T> __device__ static T tanh(T v) { return device_math::tanh_of(v); }
  template <typename T> __device__ static T sin(T v) { return device_math::sin_of(v); }
  template <typename T> __device__ static T tan(T v) { return device_math::tan_of(v); }
  template <typename T> __device__ static T lgamma(T v) { return device_math::lgamma_of(v); }
  template <typename T> __device__ static T pow(T v, T s) { return device_math::pow_of(v, s); }
  // NaN fails both comparisons, ±inf the bound.
  template <typename T> __device__ static bool is_finite(T v) {
    constexpr T kMax = std::numeric_limits<T>::max();
    return v >= -kMax && v <= kMax;
  }
};

template <typename T> struct Select {
  __device__ T operator()(bool c, T a, T b) const { return c ? a : b; }
};

}  // namespace

void unary(UnaryOp op, const Tensor& out, const Tensor& x) {
  const char* name = kernels::op_name(op);
  elementwise::unary<CudaMath>(op, x.dtype(), [&](auto out_tag, auto in_tag, auto f) {
    launch_elementwise<typename decltype(out_tag)::type, typename decltype(in_tag)::type>(name, out, {&x}, f);
  });
}

void scalar_op(ScalarOp op, const Tensor& out, const Tensor& x, double s) {
  const char* name = kernels::op_name(op);
  elementwise::scalar_op<CudaMath>(op, x.dtype(), s, [&](auto out_tag, auto in_tag, auto f) {
    launch_elementwise<typename decltype(out_tag)::type, typename decltype(in_tag)::type>(name, out, {&x}, f);
  });
}

void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  const char* name = kernels::op_name(op);
  elementwise::binary<CudaMath>(op, a.dtype(), [&](auto out_tag, auto in_tag, auto f) {
    using TO = typename decltype(out_tag)::type;
    using T = typename decltype(in_tag)::type;
    launch_elementwise<TO, T, T>(name, out, {&a, &b}, f);
  });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, bool, T, T>("where", out, {&cond, &a, &b}, Select<T>{});
  });
}

}  // namespace rematch::cuda
