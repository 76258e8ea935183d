#include "python/src/cuda_streams.h"

#include <cuda_runtime.h>

#include "tensor/cuda/check.h"

namespace rematch::python {
namespace {

void order(cudaStream_t waiting, cudaStream_t done, int device) {
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  cudaEvent_t event;
  REMATCH_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  REMATCH_CUDA_CHECK(cudaEventRecord(event, done));
  REMATCH_CUDA_CHECK(cudaStreamWaitEvent(waiting, event, 0));
  REMATCH_CUDA_CHECK(cudaEventDestroy(event));  // released once the wait is satisfied
}

// The protocol's 1 and 2 are the runtime's own handles cudaStreamLegacy and cudaStreamPerThread.
cudaStream_t as_stream(uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }

}  // namespace

uintptr_t rematch_stream(int device) { return reinterpret_cast<uintptr_t>(cuda::stream(device)); }

void consumer_waits_for_rematch(int device, uintptr_t consumer) {
  order(as_stream(consumer), cuda::stream(device), device);
}

void rematch_waits_for_consumer(int device, uintptr_t consumer) {
  order(cuda::stream(device), as_stream(consumer), device);
}

}  // namespace rematch::python
