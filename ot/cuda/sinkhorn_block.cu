// The batched Sinkhorn kernel: thread block k solves problem k, every sweep in one launch (docs/ot.md §5:
// "batch many 129×129 problems per launch"). The potentials φ = f/ε, ψ = g/ε, the last log-sum-exps and the
// column partials live in shared memory; C is read from L2/HBM (a batch of 129×129 problems in flight fits in
// L2). Each problem stops on its own: the convergence test is a block reduction, and the block leaves the loop
// when its rule is met.
// This file holds the kernel and its launch: shared memory, occupancy, the variant and the block size. What
// each block runs is BlockSolver: its state and schedules in sinkhorn_block_solver.cuh, its half-steps in
// sinkhorn_block_steps.cuh.
#include <algorithm>

#include "ot/cuda/sinkhorn_block_solver.cuh"
#include "ot/cuda/sinkhorn_block_steps.cuh"
#include "ot/cuda/sinkhorn_device.cuh"
#include "tensor/cuda/check.h"

namespace rematch::ot::cuda::detail {
namespace {

// Blocks of at most 512 threads, two per SM: 64 registers a thread, with which the float32 kernels spill at
// most 16 bytes (ptxas -v).
constexpr int kMaxThreads = 512;

template <typename T, bool kCached>
__global__ void __launch_bounds__(kMaxThreads, 2) block_kernel(const __grid_constant__ BatchArgs<T> p) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ double red[33];
  __shared__ int flags[2];
  const int64_t k = blockIdx.x;
  if (p.invalid[k]) return;
  BlockSolver<T, kCached>(p, k, smem, red, flags).run();
}

template <typename T> size_t block_smem(int64_t n, int64_t m, int threads, bool cached) {
  const int64_t values = 3 * n + 3 * m + std::max<int64_t>(threads, m) + (cached ? n * m + 4 * n + 3 * m : 0);
  return static_cast<size_t>(values) * sizeof(T);
}

template <typename T> auto block_kernel_for(bool cached) {
  return cached ? block_kernel<T, true> : block_kernel<T, false>;
}

// Blocks of `threads` that fit on one SM with `smem` bytes of dynamic shared memory each (0: none, also when
// smem and the kernel's static shared memory exceed what one block may have).
template <typename T> int blocks_per_sm(bool cached, int threads, size_t smem, const DeviceInfo& info) {
  const auto kernel = block_kernel_for<T>(cached);
  cudaFuncAttributes attributes;
  REMATCH_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (smem + attributes.sharedSizeBytes > info.smem_optin) return 0;
  REMATCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int blocks = 0;
  REMATCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem));
  return blocks;
}

}  // namespace

// Cached when K̃ fits (BlockConfig::resident). Threads: with no more problems than SMs every problem has an SM
// to itself, so the larger block; otherwise the size that keeps the most threads resident per SM (ties: more
// blocks, whose barriers then overlap).
template <typename T>
BlockConfig block_config(int64_t batch, int64_t n, int64_t m, bool allow_resident, const DeviceInfo& info) {
  BlockConfig best;
  for (const bool cached : {true, false}) {
    if (cached && !allow_resident) continue;
    for (const int threads : {kMaxThreads / 2, kMaxThreads}) {
      const size_t smem = block_smem<T>(n, m, threads, cached);
      const int per_sm = blocks_per_sm<T>(cached, threads, smem, info);
      if (per_sm == 0) continue;
      const int64_t resident_threads = static_cast<int64_t>(per_sm) * threads;
      const int64_t best_threads = static_cast<int64_t>(best.blocks_per_sm) * best.threads;
      const bool better = batch <= info.sms
                              ? threads > best.threads
                              : (resident_threads > best_threads ||
                                 (resident_threads == best_threads && per_sm > best.blocks_per_sm));
      if (!best.feasible || better) best = BlockConfig{true, cached, threads, smem, per_sm};
    }
    if (best.feasible) break;  // a cached configuration beats any log-only one
  }
  return best;
}

template <typename T> void launch_block(const BatchArgs<T>& p, const BlockConfig& config, cudaStream_t stream) {
  const auto kernel = block_kernel_for<T>(config.resident);
  REMATCH_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(config.smem)));
  kernel<<<static_cast<unsigned>(p.batch), config.threads, config.smem, stream>>>(p);
  REMATCH_CUDA_LAUNCH_CHECK("sinkhorn_block_kernel");
}

template BlockConfig block_config<float>(int64_t, int64_t, int64_t, bool, const DeviceInfo&);
template BlockConfig block_config<double>(int64_t, int64_t, int64_t, bool, const DeviceInfo&);
template void launch_block<float>(const BatchArgs<float>&, const BlockConfig&, cudaStream_t);
template void launch_block<double>(const BatchArgs<double>&, const BlockConfig&, cudaStream_t);

}  // namespace rematch::ot::cuda::detail
