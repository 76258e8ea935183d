// The CUDA runtime as the tensor layer sees it: device memory and its statistics, copies, device count.
// Implemented in runtime.cu when the build has CUDA, and by runtime_disabled.cpp (every call but the device
// queries throws) when it does not, so the rest of the engine compiles the same either way.
//
// Threads: rematch drives each device from one host thread at a time (the training loop, a CLI command, one
// test). Each device has one stream that all its work goes to, in the order it is issued, and nothing locks
// around it; the cuBLAS handles of tensor/cuda/matmul.cu and nn/cuda/gru.cu are bound to that stream and get
// their math mode (TF32 or not) set before each product, so two threads multiplying on one device at once
// could run one's product in the other's mode. Work on different devices from different threads is fine.
#pragma once

#include <cstddef>
#include <string>

#include "tensor/device.h"

namespace rematch::cuda {

bool built_with_cuda();
// Devices this process can use, asked once: 0 without CUDA, without a visible device, or when the CUDA runtime
// fails to start (a driver older than the runtime, a device the runtime does not support, ...).
int device_count();
// Why device_count() is 0 when the CUDA runtime said so with an error: the call, the error's name and its
// message, e.g. "cudaGetDeviceCount: cudaErrorNoDevice (no CUDA-capable device is detected)"; empty when the
// query succeeded (and in a build without CUDA). Kept so that a test skipping for want of a device, or a
// refused --device cuda, can say why instead of only "0 devices".
std::string device_query_error();
// Stream-ordered allocation from the device's pool; out-of-memory names the bytes asked and free/total.
void* device_malloc(size_t nbytes, int device);
void device_free(void* ptr, int device);
void memcpy(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes);

// Bytes of the device's memory pool, the one device_malloc allocates from (all of rematch's device tensors;
// not the CUDA context, nor cuBLAS's own workspace):
//   used_bytes           held by live allocations now: comparable with PyTorch's torch.cuda.memory_allocated;
//   used_peak_bytes      the most held by live allocations since the last reset (or the pool's creation):
//                        comparable with torch.cuda.max_memory_allocated;
//   reserved_bytes       backing memory the pool holds now, live or cached for reuse (freed blocks stay cached:
//                        the release threshold is raised): comparable with torch.cuda.memory_reserved;
//   reserved_peak_bytes  its most since the last reset: comparable with torch.cuda.max_memory_reserved.
// A tensor's memory is freed in stream order (cudaFreeAsync), so both calls first wait for the device's stream:
// the counters then include every free issued so far. Errors when the device is not available (a build
// without CUDA, no visible device, an index out of range).
struct MemoryStats {
  size_t used_bytes = 0, used_peak_bytes = 0, reserved_bytes = 0, reserved_peak_bytes = 0;
};
MemoryStats memory_stats(int device);
// Starts both peaks again from the current values (used_peak = used, reserved_peak = reserved).
void reset_peak_memory_stats(int device);
// Gives the pool's cached blocks back to the driver (cudaMemPoolTrimTo 0 after the stream is synchronised:
// what live tensors use stays) and returns the reserved bytes released (tensor/memory.h).
size_t release_cached_memory(int device);
// The device's total memory in bytes (cudaMemGetInfo).
size_t total_memory(int device);

}  // namespace rematch::cuda
