// Device memory comes from the stream-ordered allocator (cudaMallocAsync) on each device's default pool,
// whose release threshold is raised so freed blocks stay cached instead of returning to the driver.
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "tensor/cuda/check.h"
#include "tensor/cuda/runtime.h"

namespace rematch::cuda {

bool built_with_cuda() { return true; }

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no device" error
      return 0;
    }
    return n;
  }();
  return count;
}

namespace {
struct DeviceState {
  std::once_flag once;
  cudaStream_t stream = nullptr;
};
DeviceState& state(int device) {
  static std::vector<DeviceState> states(static_cast<size_t>(std::max(device_count(), 1)));
  REMATCH_CHECK(device >= 0 && device < device_count(), "cuda:", device, " is not available (",
                device_count(), " CUDA device(s) visible)");
  DeviceState& s = states[static_cast<size_t>(device)];
  std::call_once(s.once, [&] {
    REMATCH_CUDA_CHECK(cudaSetDevice(device));
    REMATCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    cudaMemPool_t pool;
    REMATCH_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    uint64_t threshold = UINT64_MAX;
    REMATCH_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  });
  return s;
}
}  // namespace

cudaStream_t stream(int device) { return state(device).stream; }

void* device_malloc(size_t nbytes, int device) {
  cudaStream_t s = stream(device);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  void* p = nullptr;
  cudaError_t err = cudaMallocAsync(&p, nbytes, s);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    REMATCH_FAIL("cuda:", device, ": out of memory allocating ", nbytes, " bytes (", free_b, " free of ", total_b,
                 " total)");
  }
  REMATCH_CUDA_CHECK(err);
  return p;
}

void device_free(void* ptr, int device) {
  if (!ptr) return;
  cudaSetDevice(device);
  cudaFreeAsync(ptr, stream(device));  // no throw from a destructor path
}

void memcpy(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) {
  const int dev = dst_device.is_cuda() ? dst_device.index : src_device.index;
  cudaStream_t s = stream(dev);
  REMATCH_CUDA_CHECK(cudaSetDevice(dev));
  REMATCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, s));
  // Host-side copies must be complete when we return (the host buffer may be reused at once).
  if (dst_device.is_cpu() || src_device.is_cpu()) REMATCH_CUDA_CHECK(cudaStreamSynchronize(s));
}

void check_launch(const char* kernel, const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) {
    static const bool debug = [] {
      const char* v = std::getenv("REMATCH_CUDA_DEBUG");
      return v && v[0] == '1';
    }();
    if (debug) err = cudaDeviceSynchronize();
  }
  if (err != cudaSuccess)
    REMATCH_FAIL("CUDA kernel ", kernel, " at ", file, ":", line, " failed: ", cudaGetErrorName(err), " (",
                 cudaGetErrorString(err), ")");
}

}  // namespace rematch::cuda
