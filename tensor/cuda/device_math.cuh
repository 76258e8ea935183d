// Float and double overloads of the CUDA math library, for kernels templated on the element type (the
// elementwise and softmax kernels). Precise library calls, as the CPU's std:: functions: no fast-math
// intrinsics here (ot/cuda/sinkhorn_device.cuh has its own SFU exp for the Sinkhorn sweeps).
#pragma once

namespace rematch::cuda::device_math {

__device__ __forceinline__ float exp_of(float v) { return ::expf(v); }
__device__ __forceinline__ double exp_of(double v) { return ::exp(v); }
__device__ __forceinline__ float log_of(float v) { return ::logf(v); }
__device__ __forceinline__ double log_of(double v) { return ::log(v); }
__device__ __forceinline__ float log1p_of(float v) { return ::log1pf(v); }
__device__ __forceinline__ double log1p_of(double v) { return ::log1p(v); }
__device__ __forceinline__ float sqrt_of(float v) { return ::sqrtf(v); }
__device__ __forceinline__ double sqrt_of(double v) { return ::sqrt(v); }
__device__ __forceinline__ float tanh_of(float v) { return ::tanhf(v); }
__device__ __forceinline__ double tanh_of(double v) { return ::tanh(v); }
__device__ __forceinline__ float sin_of(float v) { return ::sinf(v); }
__device__ __forceinline__ double sin_of(double v) { return ::sin(v); }
__device__ __forceinline__ float tan_of(float v) { return ::tanf(v); }
__device__ __forceinline__ double tan_of(double v) { return ::tan(v); }
__device__ __forceinline__ float lgamma_of(float v) { return ::lgammaf(v); }
__device__ __forceinline__ double lgamma_of(double v) { return ::lgamma(v); }
__device__ __forceinline__ float pow_of(float v, float s) { return ::powf(v, s); }
__device__ __forceinline__ double pow_of(double v, double s) { return ::pow(v, s); }
__device__ __forceinline__ float abs_of(float v) { return ::fabsf(v); }
__device__ __forceinline__ double abs_of(double v) { return ::fabs(v); }

}  // namespace rematch::cuda::device_math
