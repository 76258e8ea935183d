// Kernels of tests/cuda_emu/emulator_kernels.h.
#include <cooperative_groups.h>

#include "tests/cuda_emu/emulator_kernels.h"

namespace rematch::emu_test {
namespace {

__global__ void block_sums_kernel(const double* in, double* out) {
  __shared__ double warp_totals[32];
  double v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_totals[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) total += warp_totals[w];
    out[blockIdx.x] = total;
  }
}

__global__ void shuffles_kernel(int* out, int delta, int width, int src) {
  const int t = static_cast<int>(threadIdx.x);
  const int v = 100 + t;
  out[4 * t] = __shfl_xor_sync(0xffffffffu, v, 1);
  out[4 * t + 1] = __shfl_up_sync(0xffffffffu, v, delta, width);
  out[4 * t + 2] = __shfl_down_sync(0xffffffffu, v, delta, width);
  out[4 * t + 3] = __shfl_sync(0xffffffffu, v, src, width);
}

__global__ void votes_kernel(int* out, int below) {
  const int p = static_cast<int>(threadIdx.x) < below;
  const int count = __syncthreads_count(p);
  const int all = __syncthreads_and(p);
  const int any = __syncthreads_or(p);
  if (threadIdx.x == 0) {
    out[0] = count;
    out[1] = all;
    out[2] = any;
  }
}

__global__ void grid_sum_kernel(int64_t* partial, int64_t* out) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  if (threadIdx.x == 0) partial[blockIdx.x] = blockIdx.x;
  grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int64_t s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b];
    out[0] = s;
  }
}

__global__ void with_shared_kernel() {
  extern __shared__ __align__(16) unsigned char smem[];
  smem[threadIdx.x] = 1;
}

__global__ void unwritten_shared_kernel(float* out) {
  __shared__ float never_written[4];
  out[0] = never_written[2];
}

__global__ void racy_writes_kernel(int* out) {
  __shared__ int slot;
  slot = static_cast<int>(threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    out[0] = slot;
    out[1] = static_cast<int>(blockIdx.x);
  }
}

__global__ void exited_lane_kernel(int* out) {
  if (threadIdx.x == 5) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, static_cast<int>(threadIdx.x), 1);
}

__global__ void divergent_barrier_kernel(int* out) {
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
  }
}

__global__ void plain_grid_sync_kernel() { cooperative_groups::this_grid().sync(); }

}  // namespace

cudaError_t block_sums(const double* in, double* out, int blocks, int threads) {
  block_sums_kernel<<<blocks, threads>>>(in, out);
  return cudaGetLastError();
}

cudaError_t shuffles(int* out, int threads, int delta, int width, int src) {
  shuffles_kernel<<<1, threads>>>(out, delta, width, src);
  return cudaGetLastError();
}

cudaError_t votes(int* out, int threads, int below) {
  votes_kernel<<<1, threads>>>(out, below);
  return cudaGetLastError();
}

cudaError_t grid_sum(int64_t* out, int blocks, int threads) {
  int64_t* partial = nullptr;
  cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&partial), sizeof(int64_t) * static_cast<size_t>(blocks));
  if (err != cudaSuccess) return err;
  void* args[] = {&partial, &out};
  err = cudaLaunchCooperativeKernel(grid_sum_kernel, dim3(blocks), dim3(threads), args, 0, nullptr);
  cudaFree(partial);
  return err;
}

cudaError_t with_shared(int threads, size_t smem, bool raise, dim3 grid) {
  if (raise) {
    const cudaError_t err =
        cudaFuncSetAttribute(with_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (err != cudaSuccess) return cudaGetLastError();  // the same error, read (and so cleared) as a launch's
  }
  with_shared_kernel<<<grid, threads, smem>>>();
  return cudaGetLastError();
}

cudaError_t unwritten_shared(float* out) {
  unwritten_shared_kernel<<<1, 32>>>(out);
  return cudaGetLastError();
}

cudaError_t racy_writes(int* out, int threads, int blocks) {
  racy_writes_kernel<<<blocks, threads>>>(out);
  return cudaGetLastError();
}

cudaError_t shuffle_with_exited_lane() {
  int* out = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&out), 32 * sizeof(int));
  exited_lane_kernel<<<1, 32>>>(out);
  return cudaGetLastError();
}

cudaError_t divergent_barrier() {
  int* out = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&out), 32 * sizeof(int));
  divergent_barrier_kernel<<<1, 32>>>(out);
  return cudaGetLastError();
}

cudaError_t grid_sync_outside_cooperative_launch() {
  plain_grid_sync_kernel<<<2, 32>>>();
  return cudaGetLastError();
}

}  // namespace rematch::emu_test
