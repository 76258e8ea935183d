// CUDA fill and copy (with dtype conversion, broadcasting and any strides on both sides), the device twins of
// cpu::fill and cpu::copy: values convert with static_cast, as on the CPU.
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/strided.cuh"

namespace rematch::cuda {
namespace {

template <typename T> struct Constant {
  T value;
  __device__ T operator()() const { return value; }
};

template <typename TD, typename TS> struct Convert {
  __device__ TD operator()(TS v) const { return static_cast<TD>(v); }
};

}  // namespace

void fill(const Tensor& out, double value) {
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    strided::launch_elementwise<T>("fill_", out, {}, Constant<T>{static_cast<T>(value)});
  });
}

void copy(const Tensor& dst, const Tensor& src) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  // Same dtype and one contiguous run on both sides: a plain device-to-device copy.
  if (dst.dtype() == src.dtype()) {
    const strided::Problem<2> p = strided::make_problem<2>({&dst, &src});
    if (p.contiguous()) {
      if (p.data[0] == p.data[1]) return;
      const int device = dst.device().index;
      REMATCH_CUDA_CHECK(cudaSetDevice(device));
      REMATCH_CUDA_CHECK(cudaMemcpyAsync(p.data[0], p.data[1], static_cast<size_t>(n) * dtype_size(dst.dtype()),
                                         cudaMemcpyDeviceToDevice, stream(device)));
      return;
    }
  }
  dispatch_all(dst.dtype(), [&](auto dtag) {
    using TD = typename decltype(dtag)::type;
    dispatch_all(src.dtype(), [&](auto stag) {
      using TS = typename decltype(stag)::type;
      strided::launch_elementwise<TD, TS>("copy_", dst, {&src}, Convert<TD, TS>{});
    });
  });
}

}  // namespace rematch::cuda
