// Device memory comes from the stream-ordered allocator (cudaMallocAsync) on each device's default pool,
// whose release threshold is raised so freed blocks stay cached instead of returning to the driver; the pool's
// own counters give the memory statistics.
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "tensor/cuda/check.h"
#include "tensor/cuda/runtime.h"

namespace rematch::cuda {

bool built_with_cuda() { return true; }

namespace {
struct DeviceQuery {
  int count = 0;
  std::string error;  // empty when cudaGetDeviceCount succeeded
};

// What the NVIDIA driver's own library says, for a device query that failed: the runtime's message for a
// machine with no driver at all is "CUDA driver version is insufficient for CUDA runtime version", which
// misleads. Opens libcuda.so.1 (the runtime has already tried to) and asks its CUDA version, which needs no
// device and no context. Ends with what to do.
std::string driver_diagnosis() {
  const std::string todo =
      ": a CUDA device needs an NVIDIA GPU with its driver (nvidia-smi lists it); else run on the CPU";
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return std::string("no NVIDIA driver on this machine (") + (why != nullptr ? why : "libcuda.so.1 not found") +
           ")" + todo;
  }
  using DriverGetVersion = int (*)(int*);
  auto get_version = reinterpret_cast<DriverGetVersion>(dlsym(lib, "cuDriverGetVersion"));
  int version = 0;
  std::string diagnosis;
  if (get_version != nullptr && get_version(&version) == 0 && version / 1000 < CUDART_VERSION / 1000)
    diagnosis = "the NVIDIA driver supports CUDA " + std::to_string(version / 1000) + "." +
                std::to_string(version % 1000 / 10) + ", older than this build's CUDA runtime " +
                std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) +
                ": update the driver, or run on the CPU";
  dlclose(lib);
  return diagnosis.empty() ? todo.substr(2) : diagnosis;
}

const DeviceQuery& device_query() {
  static const DeviceQuery query = [] {
    DeviceQuery q;
    const cudaError_t err = cudaGetDeviceCount(&q.count);
    if (err != cudaSuccess) {
      q.count = 0;
      q.error = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                "); " + driver_diagnosis();
      cudaGetLastError();  // clear the error so that it does not surface at an unrelated later check
    }
    return q;
  }();
  return query;
}
}  // namespace

int device_count() { return device_query().count; }

std::string device_query_error() { return device_query().error; }

namespace {
struct DeviceState {
  std::once_flag once;
  cudaStream_t stream = nullptr;
};
DeviceState& state(int device) {
  static std::vector<DeviceState> states(static_cast<size_t>(std::max(device_count(), 1)));
  REMATCH_CHECK(device >= 0 && device < device_count(), "cuda:", device, " is not available (",
                device_count(), " CUDA device(s) visible", device_query().error.empty() ? "" : "; ",
                device_query().error, ")");
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

namespace {
// The device's default pool (the one device_malloc allocates from), once the device's stream has run what it
// was given: a cudaFreeAsync returns its block to the pool in stream order, so only then is it counted.
cudaMemPool_t synchronized_pool(int device) {
  cudaStream_t s = stream(device);  // checks the index and sets the pool up
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  REMATCH_CUDA_CHECK(cudaStreamSynchronize(s));
  cudaMemPool_t pool;
  REMATCH_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  return pool;
}

size_t pool_bytes(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t bytes = 0;  // these attributes are cuuint64_t
  REMATCH_CUDA_CHECK(cudaMemPoolGetAttribute(pool, attr, &bytes));
  return static_cast<size_t>(bytes);
}
}  // namespace

MemoryStats memory_stats(int device) {
  cudaMemPool_t pool = synchronized_pool(device);
  MemoryStats m;
  m.used_bytes = pool_bytes(pool, cudaMemPoolAttrUsedMemCurrent);
  m.used_peak_bytes = pool_bytes(pool, cudaMemPoolAttrUsedMemHigh);
  m.reserved_bytes = pool_bytes(pool, cudaMemPoolAttrReservedMemCurrent);
  m.reserved_peak_bytes = pool_bytes(pool, cudaMemPoolAttrReservedMemHigh);
  return m;
}

void reset_peak_memory_stats(int device) {
  cudaMemPool_t pool = synchronized_pool(device);
  uint64_t zero = 0;  // the only value a high-water mark takes: it restarts from the current value
  REMATCH_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  REMATCH_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
}

size_t release_cached_memory(int device) {
  cudaMemPool_t pool = synchronized_pool(device);
  const size_t before = pool_bytes(pool, cudaMemPoolAttrReservedMemCurrent);
  REMATCH_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  const size_t after = pool_bytes(pool, cudaMemPoolAttrReservedMemCurrent);
  return before - std::min(before, after);
}

size_t total_memory(int device) {
  stream(device);  // checks the index
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  size_t free_b = 0, total_b = 0;
  REMATCH_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return total_b;
}

namespace {
// Makes `waiting`'s later work wait for what `done` has been given so far (both devices' streams; no host wait).
void order_after(int waiting, int done) {
  cudaEvent_t event;
  REMATCH_CUDA_CHECK(cudaSetDevice(done));
  REMATCH_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  REMATCH_CUDA_CHECK(cudaEventRecord(event, stream(done)));
  REMATCH_CUDA_CHECK(cudaSetDevice(waiting));
  REMATCH_CUDA_CHECK(cudaStreamWaitEvent(stream(waiting), event, 0));
  REMATCH_CUDA_CHECK(cudaEventDestroy(event));  // released once the wait is satisfied
}
}  // namespace

void memcpy(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) {
  const int dev = dst_device.is_cuda() ? dst_device.index : src_device.index;
  cudaStream_t s = stream(dev);
  // Between two devices the copy runs on the destination's stream, which knows nothing of the source's: it
  // must wait for the kernels still writing the source, and the source's stream must wait for the copy
  // before it reuses the memory (a stream-ordered free of the source is ordered on the source's stream only).
  const bool peer = dst_device.is_cuda() && src_device.is_cuda() && dst_device.index != src_device.index;
  if (peer) order_after(dev, src_device.index);
  REMATCH_CUDA_CHECK(cudaSetDevice(dev));
  REMATCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, s));
  if (peer) order_after(src_device.index, dev);
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
