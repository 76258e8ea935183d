// Kernels that exercise the CUDA emulator (tools/cuda_emu/), written in CUDA (emulator_kernels.cu) and translated
// as rematch's own CUDA sources are; each host function launches one and returns cudaGetLastError's answer.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace rematch::emu_test {

// out[b] = the sum of in[b * threads .. (b + 1) * threads), through shared memory, __syncthreads and
// __shfl_xor_sync (block b of `blocks`).
cudaError_t block_sums(const double* in, double* out, int blocks, int threads);
// Per thread t of one block of `threads`: out[4 t..4 t + 3] = the xor-1 partner's value, the value of the lane
// `delta` below within segments of `width` (__shfl_up_sync), the one `delta` above (__shfl_down_sync), and lane
// `src` of the segment (__shfl_sync), where each thread's value is 100 + t.
cudaError_t shuffles(int* out, int threads, int delta, int width, int src);
// out[0..2] = __syncthreads_count, _and, _or of (threadIdx.x < below) over one block of `threads`.
cudaError_t votes(int* out, int threads, int below);
// out[0] = the sum of every block's index, written by block 0 after grid.sync() (a cooperative launch).
cudaError_t grid_sum(int64_t* out, int blocks, int threads);
// One block of `threads`, dynamic shared memory of `smem` bytes (raised with cudaFuncSetAttribute when `raise`).
cudaError_t with_shared(int threads, size_t smem, bool raise, dim3 grid = dim3(1));
// out[0] = what a thread reads from a __shared__ float nobody wrote.
cudaError_t unwritten_shared(float* out);
// A race: every thread of one block of `threads` writes its index to one shared slot, and after a barrier thread 0
// copies the slot to out[0]; and every block of `blocks` writes its index to out[1].
cudaError_t racy_writes(int* out, int threads, int blocks);
// Faults the emulator stops at: a shuffle naming a lane that has exited; half a warp at __syncthreads and the other
// half at a shuffle with the whole warp's mask (a deadlock on the GPU); grid.sync() in an ordinary launch.
cudaError_t shuffle_with_exited_lane();
cudaError_t divergent_barrier();
cudaError_t grid_sync_outside_cooperative_launch();

}  // namespace rematch::emu_test
