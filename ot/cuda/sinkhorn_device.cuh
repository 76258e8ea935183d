// Internal to ot/cuda/: the device arithmetic every Sinkhorn kernel shares — exp/log, the entry C_ij/ε (+inf
// where masked), log-sum-exp accumulators and their merges, warp and block reductions.
//
// Numerics (docs/ot.md §1.3: log domain, max-shifted log-sum-exp in float32 on CUDA). A masked entry is
// C/ε = +inf, so every term it enters is exp(−inf) = 0 exactly and its plan entry is exactly 0. float32 exp is
// the SFU's ex2.approx.ftz (one instruction, the unit docs/ot.md §7.2 counts) of x·log2(e); results below
// FLT_MIN flush to 0, as the CPU's fast_expf does. float64 uses the libdevice exp/log. Sums of exponentials
// are accumulated in T (a float→double conversion costs as much as the exp on sm_90); block-level sums of
// errors are in double, in a fixed order, so a run is bitwise reproducible.
// C/ε is evaluated as C·(1/ε): a division per visit would cost a second SFU instruction (the reciprocal); it
// differs from the CPU's C/ε by at most one ulp of C/ε.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "ot/cuda/sinkhorn_kernels.h"
#include "ot/cuda/sinkhorn_launch.h"

namespace rematch::ot::cuda::detail {

constexpr unsigned kFullMask = 0xffffffffu;

template <typename T> __device__ __forceinline__ T inf() { return std::numeric_limits<T>::infinity(); }
__device__ __forceinline__ int64_t min64(int64_t x, int64_t y) { return y < x ? y : x; }
__device__ __forceinline__ int64_t max64(int64_t x, int64_t y) { return y > x ? y : x; }

__device__ __forceinline__ float exp_dev(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}
__device__ __forceinline__ double exp_dev(double x) { return exp(x); }
__device__ __forceinline__ float log_dev(float x) { return logf(x); }
__device__ __forceinline__ double log_dev(double x) { return log(x); }

// A shifted sum is trusted in [kSumLo, kSumHi] (ot/cpu/sinkhorn_kernels.h).
template <typename T> __device__ __forceinline__ bool sum_ok(T s) {
  return s >= T(kSumLo<T>) && s <= T(kSumHi<T>);
}
// The same range for a sum known by its log: the scaling domain's test of s = Σ_j K̃_ij v_j = exp(log_s).
template <typename T> __device__ __forceinline__ bool log_sum_ok(double log_s) {
  return log_s >= log(kSumLo<T>) && log_s <= log(kSumHi<T>);
}

// C_ij/ε of problem-slice `cost`/`mask` (row stride ld), +inf where masked. Read-only for the whole launch.
template <typename T>
__device__ __forceinline__ T scaled_cost(const T* cost, const uint8_t* mask, int64_t ld, int64_t i, int64_t j,
                                         T inv_eps) {
  const int64_t o = i * ld + j;
  if (mask && !__ldg(mask + o)) return inf<T>();
  return __ldg(cost + o) * inv_eps;
}

// The per-problem result the host reads back (sinkhorn_launch.h), written once by the solver's last thread.
__device__ __forceinline__ void write_stats(DeviceStats& st, int64_t iterations, double marginal_error,
                                            bool converged, int32_t range_error) {
  st.iterations = iterations;
  st.marginal_error = marginal_error;
  st.converged = converged;
  st.range_error = range_error;
}

// Butterfly reductions over aligned groups of `width` lanes (a power of two ≤ 32). Every lane of the warp must
// call them. IEEE addition and max are commutative, so each lane of a group ends with the same bits.
template <typename T> __device__ __forceinline__ T group_sum(T v, int width) {
  for (int o = width >> 1; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
template <typename T> __device__ __forceinline__ T group_max(T v, int width) {
  for (int o = width >> 1; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

// A log-sum-exp in two parts, mx + log(s): s = Σ exp(x − mx) with mx the largest x seen (−inf and 0 for none).
// Merging is symmetric in its two operands (both terms are rescaled the same way and added), so butterfly
// merges leave every lane with the same bits.
template <typename T> __device__ __forceinline__ void lse_merge(T& mx, T& s, T mx2, T s2) {
  const T top = fmax(mx, mx2);
  if (top == -inf<T>()) return;
  const T t1 = mx == top ? s : s * exp_dev(mx - top);
  const T t2 = mx2 == top ? s2 : s2 * exp_dev(mx2 - top);
  mx = top;
  s = t1 + t2;
}
template <typename T> __device__ __forceinline__ void group_lse_merge(T& mx, T& s, int width) {
  for (int o = width >> 1; o > 0; o >>= 1) {
    const T mx2 = __shfl_xor_sync(kFullMask, mx, o);
    const T s2 = __shfl_xor_sync(kFullMask, s, o);
    lse_merge(mx, s, mx2, s2);
  }
}
// Adds x[0..count) (count ≤ K) to (mx, s) with one pass: the new maximum of the batch first, one exp per value
// plus one to rescale s when the maximum grew — exact max-shifting (no overflow, no lost terms) for K+1 exps
// per K values, with no data-dependent branch per value.
template <typename T, int K> __device__ __forceinline__ void lse_add(T& mx, T& s, const T (&x)[K], int count) {
  T top = mx;
#pragma unroll
  for (int q = 0; q < K; ++q)
    if (q < count) top = fmax(top, x[q]);
  if (top == -inf<T>()) return;
  if (top != mx) s *= exp_dev(mx - top);  // mx = −inf: s is 0 and stays 0
  mx = top;
#pragma unroll
  for (int q = 0; q < K; ++q)
    if (q < count) s += exp_dev(x[q] - top);
}
template <typename T> __device__ __forceinline__ T lse_value(T mx, T s) {
  return mx == -inf<T>() ? -inf<T>() : mx + log_dev(s);
}

// Lanes per row for a row of m entries: the smallest power of two (≤ 32) giving each lane at most `per_lane`.
__device__ __forceinline__ int lanes_for(int64_t m, int per_lane) {
  int lanes = 1;
  while (lanes < 32 && static_cast<int64_t>(lanes) * per_lane < m) lanes <<= 1;
  return lanes;
}

// Sum over the block in a fixed order (butterflies within warps, then thread 0 adds the warp totals in warp
// order); every thread returns the same value. blockDim.x is a multiple of 32; red holds 33 doubles.
__device__ __forceinline__ double block_sum(double v, double* red) {
  v = group_sum(v, 32);
  __syncthreads();  // a previous call's readers of red[32] are done
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    for (unsigned w = 0; w < (blockDim.x >> 5); ++w) total += red[w];
    red[32] = total;
  }
  __syncthreads();
  return red[32];
}

}  // namespace rematch::ot::cuda::detail
