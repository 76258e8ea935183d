// The value checks of cpu::check_values (ot/batched.cpp) run on the device, so a CUDA solve reads C from the
// host never: one flag per problem, decided by the same comparisons. The host turns a raised flag into the
// CPU's message by running check_values on a copy of that one problem (sinkhorn.cu), so the wording, and
// which of several faults is named, are the CPU's.
//   weights  a, b finite and >= 0, Σa > 0, |Σa − Σb| <= rel·max(Σa, Σb), f0/ε and g0/ε finite
//   costs    every unmasked |C_ij| < FLT_MAX·ε (DBL_MAX·ε): C/ε finite
//   reach    with a mask: every row of positive weight has an unmasked entry in a column of positive weight,
//            and every column likewise (without a mask this follows from Σa, Σb > 0)
#include <algorithm>
#include <limits>

#include "ot/cuda/sinkhorn_device.cuh"
#include "tensor/cuda/check.h"

namespace rematch::ot::cuda::detail {
namespace {

constexpr int kThreads = 256;

// Block k checks problem k's weights and warm starts and writes invalid[k] (the first of the three kernels).
// The sums are reduced in parallel; when |Σa − Σb| lands within 1e-9·max of the tolerance (the parallel sums
// are exact to ~1e-13 relative), thread 0 redoes them in the CPU's order so the verdict is the CPU's.
template <typename T> __global__ void check_weights_kernel(const __grid_constant__ BatchArgs<T> p, int32_t* invalid) {
  __shared__ double red[33];
  const int64_t k = blockIdx.x, n = p.rows[k], m = p.cols[k];
  const T* a = p.a + k * p.a_step;
  const T* b = p.b + k * p.b_step;
  bool bad = false;
  double sa = 0, sb = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    bad |= !(isfinite(a[i]) && a[i] >= T(0));
    sa += double(a[i]);
  }
  for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
    bad |= !(isfinite(b[j]) && b[j] >= T(0));
    sb += double(b[j]);
  }
  for (int64_t i = threadIdx.x; p.f0 && i < n; i += blockDim.x) bad |= !isfinite(p.f0[k * p.f0_step + i] / p.eps);
  for (int64_t j = threadIdx.x; p.g0 && j < m; j += blockDim.x) bad |= !isfinite(p.g0[k * p.g0_step + j] / p.eps);
  sa = block_sum(sa, red);
  sb = block_sum(sb, red);
  bad = __syncthreads_or(bad);
  if (threadIdx.x != 0) return;
  bool fail = bad || !(sa > 0);
  if (!fail) {
    const double rel = sizeof(T) == 4 ? 1e-5 : 1e-6;
    double big = fmax(sa, sb);
    if (fabs(fabs(sa - sb) - rel * big) <= 1e-9 * big) {
      sa = 0;
      sb = 0;
      for (int64_t i = 0; i < n; ++i) sa += a[i];
      for (int64_t j = 0; j < m; ++j) sb += b[j];
      big = fmax(sa, sb);
    }
    fail = fabs(sa - sb) > rel * big;
  }
  invalid[k] = fail;
}

// One warp per padded row (k, i): the unmasked costs of the valid block, and with a mask the reach flags.
// Many lanes may store the same 1 to a flag; no other value is ever stored there.
template <typename T>
__global__ void check_costs_kernel(const __grid_constant__ BatchArgs<T> p, double largest, int32_t* invalid,
                                   uint8_t* row_reach, uint8_t* col_reach) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  for (int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; r < p.batch * p.n; r += warps) {
    const int64_t k = r / p.n, i = r - k * p.n;
    if (i >= p.rows[k]) continue;
    const int64_t m = p.cols[k];
    const T* cost = p.cost + k * p.n * p.m + i * p.m;
    const uint8_t* mask = p.mask ? p.mask + k * p.mask_step + i * p.m : nullptr;
    const T* a = p.a + k * p.a_step;
    const T* b = p.b + k * p.b_step;
    bool bad = false;
    for (int64_t j = lane; j < m; j += 32) {
      if (mask && !mask[j]) continue;
      bad |= !(fabs(double(cost[j])) < largest);
      if (mask) {
        if (b[j] > T(0)) row_reach[k * p.n + i] = 1;
        if (a[i] > T(0)) col_reach[k * p.m + j] = 1;
      }
    }
    if (__any_sync(kFullMask, bad) && lane == 0) atomicOr(invalid + k, 1);
  }
}

// A row (column) of positive weight that reaches no column (row) of positive weight.
template <typename T>
__global__ void check_reach_kernel(const __grid_constant__ BatchArgs<T> p, int32_t* invalid, const uint8_t* row_reach,
                                   const uint8_t* col_reach) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < p.batch * p.n; e += stride) {
    const int64_t k = e / p.n, i = e - k * p.n;
    if (i < p.rows[k] && p.a[k * p.a_step + i] > T(0) && !row_reach[e]) atomicOr(invalid + k, 1);
  }
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < p.batch * p.m; e += stride) {
    const int64_t k = e / p.m, j = e - k * p.m;
    if (j < p.cols[k] && p.b[k * p.b_step + j] > T(0) && !col_reach[e]) atomicOr(invalid + k, 1);
  }
}

unsigned grid_for(int64_t work_items) {
  return static_cast<unsigned>(std::clamp<int64_t>((work_items + kThreads - 1) / kThreads, 1, 65536));
}

}  // namespace

template <typename T>
void launch_validate(const BatchArgs<T>& p, int32_t* invalid, uint8_t* row_reach, uint8_t* col_reach,
                     cudaStream_t stream) {
  check_weights_kernel<T><<<static_cast<unsigned>(p.batch), kThreads, 0, stream>>>(p, invalid);
  REMATCH_CUDA_LAUNCH_CHECK("sinkhorn_check_weights_kernel");
  // As check_values: |C| beyond max(T)·ε would make C/ε infinite.
  const double largest = static_cast<double>(std::numeric_limits<T>::max()) * p.epsilon;
  check_costs_kernel<T><<<grid_for(p.batch * p.n * 32), kThreads, 0, stream>>>(p, largest, invalid, row_reach,
                                                                              col_reach);
  REMATCH_CUDA_LAUNCH_CHECK("sinkhorn_check_costs_kernel");
  if (!p.mask) return;
  check_reach_kernel<T><<<grid_for(p.batch * std::max(p.n, p.m)), kThreads, 0, stream>>>(p, invalid, row_reach,
                                                                                       col_reach);
  REMATCH_CUDA_LAUNCH_CHECK("sinkhorn_check_reach_kernel");
}

template void launch_validate<float>(const BatchArgs<float>&, int32_t*, uint8_t*, uint8_t*, cudaStream_t);
template void launch_validate<double>(const BatchArgs<double>&, int32_t*, uint8_t*, uint8_t*, cudaStream_t);

}  // namespace rematch::ot::cuda::detail
