// Checks for CUDA runtime calls and kernel launches: a failure names the call, file:line and CUDA's message.
#pragma once

#include <cuda_runtime.h>

#include "tensor/error.h"

#define REMATCH_CUDA_CHECK(call)                                                                   \
  do {                                                                                            \
    cudaError_t err_ = (call);                                                                    \
    if (err_ != cudaSuccess)                                                                      \
      REMATCH_FAIL("CUDA error at ", __FILE__, ":", __LINE__, ": ", #call, " failed: ", cudaGetErrorName(err_), \
                   " (", cudaGetErrorString(err_), ")");                                          \
  } while (0)

namespace rematch::cuda {
// After a kernel launch: reports launch errors, and with REMATCH_CUDA_DEBUG=1 synchronises so a fault is
// reported at the op that caused it.
void check_launch(const char* kernel, const char* file, int line);
cudaStream_t stream(int device);
}  // namespace rematch::cuda

#define REMATCH_CUDA_LAUNCH_CHECK(name) ::rematch::cuda::check_launch(name, __FILE__, __LINE__)
