// The CUDA runtime as the tensor layer sees it: device memory, copies, device count. Implemented in
// runtime.cu when the build has CUDA, and by runtime_disabled.cpp (every call but device_count throws) when
// it does not, so the rest of the engine compiles the same either way.
#pragma once

#include <cstddef>

#include "tensor/device.h"

namespace rematch::cuda {

bool built_with_cuda();
int device_count();  // 0 without CUDA or without a visible device
// Stream-ordered allocation from the device's pool; out-of-memory names the bytes asked and free/total.
void* device_malloc(size_t nbytes, int device);
void device_free(void* ptr, int device);
void memcpy(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes);

}  // namespace rematch::cuda
