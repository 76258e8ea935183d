// The CUDA runtime API of the emulator (tools/cuda_emu/include/cuda_runtime.h). Work given to a stream runs at
// once, in the order it is given, so every stream and event wait is already satisfied. Device memory is host
// memory, filled with 0xFF bytes when allocated (NaN as floats, -1 as integers: a kernel that reads what no one
// wrote shows it); every allocation is recorded, so a free of something not allocated, a second free, or a copy
// that runs past an allocation's end is refused as the real runtime refuses it. The pool statistics follow the
// stream-ordered allocator's: freed blocks stay reserved until a synchronisation finds the pool above its
// release threshold or cudaMemPoolTrimTo gives them back.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tools/cuda_emu/emulator.h"

struct CUstream_st {
  int device;
};
struct CUevent_st {
  int device;
  bool timing;
  bool recorded;
  std::chrono::steady_clock::time_point when;
};
struct CUmemPoolHandle_st {
  int device;
  uint64_t release_threshold = 0;
  uint64_t used = 0, used_high = 0, reserved = 0, reserved_high = 0;
};

namespace cuda_emu {
namespace {

int env_int(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < lo || n > hi) {
    std::fprintf(stderr, "cuda emulator: %s=%s is not a whole number in [%d, %d]\n", name, v, lo, hi);
    std::abort();
  }
  return static_cast<int>(n);
}

constexpr uint64_t kTotalBytes = 16ull << 30;  // what cudaMemGetInfo reports as the device's memory

thread_local int current = 0;
thread_local cudaError_t last_error = cudaSuccess;

struct Allocation {
  size_t bytes;
  int device;
};
std::mutex state_mutex;
std::map<const char*, Allocation>& allocations() {
  static std::map<const char*, Allocation> table;
  return table;
}
std::vector<CUmemPoolHandle_st>& pools() {
  static std::vector<CUmemPoolHandle_st> table = [] {
    std::vector<CUmemPoolHandle_st> p(static_cast<size_t>(device_count()));
    for (size_t d = 0; d < p.size(); ++d) p[d].device = static_cast<int>(d);
    return p;
  }();
  return table;
}

// The allocation holding [p, p + bytes), or nullptr when p is not device memory at all (host memory).
// Sets *overrun when p is device memory but the range runs past its allocation.
const Allocation* find_allocation(const void* p, size_t bytes, bool* overrun) {
  *overrun = false;
  const auto& table = allocations();
  const char* c = static_cast<const char*>(p);
  auto it = table.upper_bound(c);
  if (it == table.begin()) return nullptr;
  --it;
  if (c >= it->first + std::max<size_t>(it->second.bytes, 1)) return nullptr;
  if (c + bytes > it->first + it->second.bytes) *overrun = true;
  return &it->second;
}

void settle(CUmemPoolHandle_st& pool) {  // a synchronisation: the pool keeps at most its release threshold
  if (pool.reserved > pool.release_threshold) pool.reserved = std::max(pool.used, pool.release_threshold);
}
void settle_all() {
  std::lock_guard<std::mutex> lock(state_mutex);
  for (auto& pool : pools()) settle(pool);
}

// Sets *to_host when the copy reads device memory into host memory.
cudaError_t check_copy(void* dst, const void* src, size_t bytes, bool* to_host) {
  std::lock_guard<std::mutex> lock(state_mutex);
  bool overrun_dst = false, overrun_src = false;
  const bool dst_on_device = find_allocation(dst, bytes, &overrun_dst) != nullptr;
  const bool src_on_device = find_allocation(src, bytes, &overrun_src) != nullptr;
  *to_host = src_on_device && !dst_on_device;
  if (overrun_dst || overrun_src) return cudaErrorInvalidValue;
  const char* d = static_cast<const char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (bytes > 0 && d < s + bytes && s < d + bytes && d != s) return cudaErrorInvalidValue;  // overlapping
  return cudaSuccess;
}

}  // namespace

int device_count() {
  static const int n = env_int("REMATCH_CUDA_EMU_DEVICES", 1, 0, 16);
  return n;
}
int sm_count() {
  static const int n = env_int("REMATCH_CUDA_EMU_SMS", 4, 1, 132);
  return n;
}
int current_device() { return current; }
int stream_device(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return current;
  return stream->device;
}
cudaError_t set_last_error(cudaError_t error) {
  if (error != cudaSuccess) last_error = error;
  return error;
}

}  // namespace cuda_emu

using cuda_emu::set_last_error;

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return set_last_error(cudaErrorInvalidValue);
  *count = cuda_emu::device_count();
  return *count == 0 ? set_last_error(cudaErrorNoDevice) : cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= cuda_emu::device_count()) return set_last_error(cudaErrorInvalidDevice);
  cuda_emu::current = device;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return set_last_error(cudaErrorInvalidValue);
  *device = cuda_emu::current;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr || device < 0 || device >= cuda_emu::device_count()) return set_last_error(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "rematch CUDA emulator (H200 limits, %d SMs)", cuda_emu::sm_count());
  prop->totalGlobalMem = cuda_emu::kTotalBytes;
  prop->sharedMemPerBlock = cuda_emu::kDefaultDynamicSmem;
  prop->sharedMemPerBlockOptin = cuda_emu::kMaxSmemPerBlockOptin;
  prop->sharedMemPerMultiprocessor = cuda_emu::kSmemPerSm;
  prop->regsPerBlock = 65536;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = cuda_emu::kMaxThreadsPerBlock;
  prop->maxThreadsDim[0] = 1024;
  prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = 65535;
  prop->maxGridSize[2] = 65535;
  prop->maxThreadsPerMultiProcessor = cuda_emu::kMaxThreadsPerSm;
  prop->multiProcessorCount = cuda_emu::sm_count();
  prop->major = 9;
  prop->minor = 0;
  prop->cooperativeLaunch = 1;
  prop->pciBusID = device + 1;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr || device < 0 || device >= cuda_emu::device_count()) return set_last_error(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = cuda_emu::kMaxThreadsPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(cuda_emu::kDefaultDynamicSmem); break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMultiProcessorCount: *value = cuda_emu::sm_count(); break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrCooperativeLaunch: *value = 1; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(cuda_emu::kMaxSmemPerBlockOptin); break;
    default: return set_last_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}
cudaError_t cudaDeviceGetPCIBusId(char* bus, int len, int device) {
  if (bus == nullptr || device < 0 || device >= cuda_emu::device_count()) return set_last_error(cudaErrorInvalidDevice);
  std::snprintf(bus, static_cast<size_t>(len), "0000:%02x:00.0", device + 1);
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() {
  cuda_emu::settle_all();
  return cuda_emu::last_error;  // a sticky kernel error would surface here; launches report theirs at once
}
cudaError_t cudaGetLastError() {
  const cudaError_t e = cuda_emu::last_error;
  cuda_emu::last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return cuda_emu::last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorCooperativeLaunchTooLarge: return "cudaErrorCooperativeLaunchTooLarge";
  }
  return "cudaErrorUnknown";
}
const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
  }
  return "unknown error";
}

cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t stream) {
  if (ptr == nullptr) return set_last_error(cudaErrorInvalidValue);
  const int device = cuda_emu::stream_device(stream);
  if (device < 0) return set_last_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(cuda_emu::state_mutex);
  CUmemPoolHandle_st& pool = cuda_emu::pools()[static_cast<size_t>(device)];
  const uint64_t reserved = pool.used + bytes > pool.reserved ? pool.used + bytes : pool.reserved;
  if (reserved > cuda_emu::kTotalBytes) return set_last_error(cudaErrorMemoryAllocation);
  void* p = nullptr;
  if (posix_memalign(&p, 256, std::max<size_t>(bytes, 1)) != 0) return set_last_error(cudaErrorMemoryAllocation);
  std::memset(p, 0xFF, bytes);
  cuda_emu::allocations()[static_cast<const char*>(p)] = cuda_emu::Allocation{bytes, device};
  pool.used += bytes;
  pool.reserved = reserved;
  pool.used_high = std::max(pool.used_high, pool.used);
  pool.reserved_high = std::max(pool.reserved_high, pool.reserved);
  *ptr = p;
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** ptr, size_t bytes) { return cudaMallocAsync(ptr, bytes, nullptr); }
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  if (ptr == nullptr) return cudaSuccess;
  std::lock_guard<std::mutex> lock(cuda_emu::state_mutex);
  auto& table = cuda_emu::allocations();
  const auto it = table.find(static_cast<const char*>(ptr));
  if (it == table.end()) {
    std::fprintf(stderr, "cuda emulator: cudaFree of %p, which is not device memory (or was freed already)\n", ptr);
    return set_last_error(cudaErrorInvalidValue);
  }
  CUmemPoolHandle_st& pool = cuda_emu::pools()[static_cast<size_t>(it->second.device)];
  pool.used -= it->second.bytes;
  std::free(ptr);
  table.erase(it);
  return cudaSuccess;
}
cudaError_t cudaFree(void* ptr) { return cudaFreeAsync(ptr, nullptr); }
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  std::lock_guard<std::mutex> lock(cuda_emu::state_mutex);
  const CUmemPoolHandle_st& pool = cuda_emu::pools()[static_cast<size_t>(cuda_emu::current)];
  *total_bytes = cuda_emu::kTotalBytes;
  *free_bytes = cuda_emu::kTotalBytes - pool.reserved;
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr || cuda_emu::stream_device(stream) < 0) return set_last_error(cudaErrorInvalidValue);
  bool to_host = false;
  const cudaError_t err = cuda_emu::check_copy(dst, src, bytes, &to_host);
  if (err != cudaSuccess) return set_last_error(err);
  std::memcpy(dst, src, bytes);
  if (to_host) cuda_emu::digest_copy(src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  {
    std::lock_guard<std::mutex> lock(cuda_emu::state_mutex);
    bool overrun = false;
    if (cuda_emu::find_allocation(ptr, bytes, &overrun) == nullptr || overrun)
      return set_last_error(cudaErrorInvalidValue);  // memset takes device memory only
  }
  std::memset(ptr, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemset(void* ptr, int value, size_t bytes) { return cudaMemsetAsync(ptr, value, bytes, nullptr); }

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (pool == nullptr || device < 0 || device >= cuda_emu::device_count()) return set_last_error(cudaErrorInvalidDevice);
  *pool = &cuda_emu::pools()[static_cast<size_t>(device)];
  return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  std::lock_guard<std::mutex> lock(cuda_emu::state_mutex);
  const uint64_t v = *static_cast<uint64_t*>(value);
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold: pool->release_threshold = v; return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh:
      if (v != 0) return set_last_error(cudaErrorInvalidValue);
      pool->used_high = pool->used;
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
      if (v != 0) return set_last_error(cudaErrorInvalidValue);
      pool->reserved_high = pool->reserved;
      return cudaSuccess;
    default: return set_last_error(cudaErrorInvalidValue);
  }
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  std::lock_guard<std::mutex> lock(cuda_emu::state_mutex);
  uint64_t& out = *static_cast<uint64_t*>(value);
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold: out = pool->release_threshold; return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent: out = pool->reserved; return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh: out = pool->reserved_high; return cudaSuccess;
    case cudaMemPoolAttrUsedMemCurrent: out = pool->used; return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh: out = pool->used_high; return cudaSuccess;
    default: return set_last_error(cudaErrorInvalidValue);
  }
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t min_bytes_to_keep) {
  std::lock_guard<std::mutex> lock(cuda_emu::state_mutex);
  pool->reserved = std::max<uint64_t>(pool->used, std::min<uint64_t>(pool->reserved, min_bytes_to_keep));
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (stream == nullptr) return set_last_error(cudaErrorInvalidValue);
  *stream = new CUstream_st{cuda_emu::current};
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  const int device = cuda_emu::stream_device(stream);
  if (device < 0) return set_last_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(cuda_emu::state_mutex);
  cuda_emu::settle(cuda_emu::pools()[static_cast<size_t>(device)]);
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  if (event == nullptr || cuda_emu::stream_device(stream) < 0) return set_last_error(cudaErrorInvalidValue);
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  if (event == nullptr) return set_last_error(cudaErrorInvalidValue);
  *event = new CUevent_st{cuda_emu::current, (flags & cudaEventDisableTiming) == 0, false, {}};
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, 0); }
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (event == nullptr) return set_last_error(cudaErrorInvalidValue);
  const int device = cuda_emu::stream_device(stream);
  if (device != event->device) return set_last_error(cudaErrorInvalidValue);  // the real runtime refuses it too
  event->recorded = true;
  event->when = std::chrono::steady_clock::now();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (event == nullptr) return set_last_error(cudaErrorInvalidValue);
  return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr || start == nullptr || end == nullptr || !start->timing || !end->timing || !start->recorded ||
      !end->recorded)
    return set_last_error(cudaErrorInvalidValue);
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}
