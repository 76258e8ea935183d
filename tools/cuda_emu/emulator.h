// Internal to tools/cuda_emu/: the emulated devices' state that the launch (launch.cpp) and the runtime API
// (runtime_api.cpp) share.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace cuda_emu {

// The emulated machine: REMATCH_CUDA_EMU_DEVICES devices (default 1), each with REMATCH_CUDA_EMU_SMS
// streaming multiprocessors (default 4: small, so a cooperative launch has few co-resident blocks) and the
// per-block and per-SM limits of an H200 (compute capability 9.0).
int device_count();
int sm_count();
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxThreadsPerSm = 2048;
constexpr int kMaxBlocksPerSm = 32;
constexpr size_t kDefaultDynamicSmem = 48 * 1024;       // without cudaFuncSetAttribute
constexpr size_t kMaxSmemPerBlockOptin = 227 * 1024;     // cudaDevAttrMaxSharedMemoryPerBlockOptin
constexpr size_t kSmemPerSm = 228 * 1024;
constexpr size_t kSmemReservedPerBlock = 1024;

int current_device();
// The device a stream belongs to (the current device for the default streams); -1 for an unknown handle.
int stream_device(cudaStream_t stream);
// Records `error` as the one cudaGetLastError returns next, and returns it.
cudaError_t set_last_error(cudaError_t error);

// What a launch must know of a kernel, keyed by its address (kernel_attributes.cpp): the dynamic shared memory
// cudaFuncSetAttribute allowed, and the static shared memory its blocks have used (known once it has run one).
struct FuncInfo {
  size_t max_dynamic_smem = kDefaultDynamicSmem;
  size_t static_smem = 0;
};
FuncInfo func_info(const void* func);
void record_static_smem(const void* func, size_t bytes);
// Blocks of `block_size` threads with `dynamic_smem` bytes each that fit on one SM at once (0: none).
int blocks_per_sm(const FuncInfo& info, int block_size, size_t dynamic_smem);

// With REMATCH_CUDA_EMU_DIGEST=FILE, the bytes of every copy from device to host memory go into the process's
// digest, appended to FILE at exit (digest.cpp); otherwise nothing.
void digest_copy(const void* src, size_t bytes);

}  // namespace cuda_emu
