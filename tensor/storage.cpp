#include "tensor/storage.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tensor/cuda/runtime.h"
#include "tensor/error.h"
#include "tensor/memory.h"

namespace rematch {

namespace {

// Host blocks of 1 MiB and more are kept after they are freed and handed out again: the smallest cached block
// that fits a request of at least half its size. A fresh large allocation is an mmap whose pages fault in (and
// are zeroed by the kernel) on first touch, which costs about as much as one pass over the data: without the
// cache an elementwise op on 16M floats pays that on every call. (Exact sizes alone missed one request in four
// in a training run whose batches differ in their longest caption; the half rule misses one in ten, for about
// 5 % more live bytes at the peak.)
//
// How much is kept (tensor/memory.h): live + cached never exceeds the high-water mark (the most that was live at
// once since the start or the last release_cached_memory()) and a quarter more. A fresh allocation that would
// pass that first gives back the blocks freed longest ago. (It used to keep up to 1 GiB whatever the peak: a run
// whose batches differ in shape filled it with blocks of sizes it never asked for again.) Why a quarter: at the
// peak every block is live, and with no room above it the blocks a step frees are not the sizes its next
// allocations ask for often enough; measured on the SGR step of bench/sgraf_step_bench.cpp (reduced dims), no
// room gave 26 fresh mappings a step and 0.13-0.24 s of page faults (system time) a step, an eighth 15 and 0.14 s,
// a quarter 9 and 0.08 s (SAF: 13, 5, 0), for 165, 185, 205 MiB held at the peak (docs/memory.md §3). Blocks
// above kCacheLimit are never kept, nor more than kCacheLimit in all.
//
// The large blocks are mapped and unmapped directly (mmap/munmap), so that a block given back leaves the
// resident set at once: from glibc's malloc, a freed block of a few MiB goes back to its heap (the mmap
// threshold rises with the first such free) and stays resident. Under AddressSanitizer they come from
// aligned_alloc, which it checks.
constexpr size_t kCacheMinBlock = size_t(1) << 20;
constexpr size_t kCacheLimit = size_t(1) << 30;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapLargeBlocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMapLargeBlocks = false;
#else
constexpr bool kMapLargeBlocks = true;
#endif
#else
constexpr bool kMapLargeBlocks = true;
#endif

struct CachedBlock {
  void* data;
  uint64_t freed;  // when it was freed (a counter): the oldest goes first
};

struct HostCache {
  std::mutex mutex;
  std::multimap<size_t, CachedBlock> blocks;     // by size
  std::unordered_map<void*, size_t> oversized;   // live blocks handed out larger than their request: their size
  size_t cached = 0, live = 0, high_water = 0;   // high_water: the most live since the start or the last release
  size_t live_peak = 0, cached_peak = 0, held_peak = 0, hits = 0, misses = 0;
  uint64_t frees = 0;

  void note_peaks() {
    live_peak = std::max(live_peak, live);
    cached_peak = std::max(cached_peak, cached);
    held_peak = std::max(held_peak, live + cached);
  }
};

HostCache& host_cache() {
  static HostCache* cache = new HostCache;  // never destroyed: tensors in static objects may outlive it
  return *cache;
}

size_t host_block_size(size_t nbytes) {
  const size_t unit = nbytes >= kCacheMinBlock ? kCacheMinBlock : 64;  // aligned_alloc wants a multiple of 64
  return (nbytes + unit - 1) / unit * unit;
}

void* map_block(size_t size) {
  if (!kMapLargeBlocks) return std::aligned_alloc(64, size);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;  // page-aligned, so 64-byte aligned
}

void unmap_block(void* p, size_t size) {
  if (kMapLargeBlocks) ::munmap(p, size);
  else std::free(p);
}

// What live + cached may reach: the high-water mark and a quarter more (see the comment at the top).
size_t allowed(const HostCache& c) { return c.high_water + c.high_water / 4; }

// Gives back the cached block freed longest ago. Called with the lock held.
void evict_oldest(HostCache& c) {
  auto oldest = c.blocks.begin();
  for (auto it = c.blocks.begin(); it != c.blocks.end(); ++it)
    if (it->second.freed < oldest->second.freed) oldest = it;
  unmap_block(oldest->second.data, oldest->first);
  c.cached -= oldest->first;
  c.blocks.erase(oldest);
}

void* host_alloc(size_t nbytes) {
  const size_t size = host_block_size(nbytes);
  HostCache& c = host_cache();
  if (size < kCacheMinBlock) {
    void* p = std::aligned_alloc(64, size);
    REMATCH_CHECK(p != nullptr, "out of host memory: could not allocate ", nbytes, " bytes");
    std::lock_guard<std::mutex> lock(c.mutex);
    c.live += size;
    c.high_water = std::max(c.high_water, c.live);
    c.note_peaks();
    return p;
  }
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.blocks.lower_bound(size);
  if (it != c.blocks.end() && it->first <= 2 * size) {
    void* p = it->second.data;
    const size_t got = it->first;
    c.blocks.erase(it);
    c.cached -= got;
    if (got != size) c.oversized.emplace(p, got);
    c.live += got;
    ++c.hits;
    c.high_water = std::max(c.high_water, c.live);
    c.note_peaks();
    return p;
  }
  ++c.misses;
  // Stay within the high-water mark: the cached blocks freed longest ago go first.
  while (!c.blocks.empty() && c.live + size + c.cached > std::max(allowed(c), c.live + size)) evict_oldest(c);
  void* p = map_block(size);
  if (p == nullptr && !c.blocks.empty()) {  // out of memory: give everything cached back and try once more
    while (!c.blocks.empty()) evict_oldest(c);
    p = map_block(size);
  }
  REMATCH_CHECK(p != nullptr, "out of host memory: could not allocate ", nbytes, " bytes (", c.live,
                " bytes held by live tensors)");
  c.live += size;
  c.high_water = std::max(c.high_water, c.live);
  c.note_peaks();
  return p;
}

void host_free(void* p, size_t nbytes) {
  size_t size = host_block_size(nbytes);
  HostCache& c = host_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (size < kCacheMinBlock) {
    c.live -= size;
    std::free(p);
    return;
  }
  if (!c.oversized.empty()) {
    auto it = c.oversized.find(p);
    if (it != c.oversized.end()) size = it->second, c.oversized.erase(it);
  }
  c.live -= size;
  if (size > kCacheLimit) {
    unmap_block(p, size);
    return;
  }
  while (!c.blocks.empty() && (c.cached + size > kCacheLimit || c.live + c.cached + size > allowed(c)))
    evict_oldest(c);
  c.blocks.emplace(size, CachedBlock{p, ++c.frees});
  c.cached += size;
  c.note_peaks();
}

size_t status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(in, line))
    if (line.compare(0, n, field) == 0) return static_cast<size_t>(std::stoll(line.substr(n))) * 1024;
  return 0;
}

}  // namespace

Storage::Storage(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  if (nbytes == 0) return;  // an empty tensor needs no memory on any device
  if (device.is_cpu()) {
    data_ = host_alloc(nbytes);
  } else {
    data_ = cuda::device_malloc(nbytes, device.index);
  }
}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> release)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)) {}

Storage::~Storage() {
  if (release_) {
    release_(data_);
  } else if (data_) {
    if (device_.is_cpu()) host_free(data_, nbytes_);
    else cuda::device_free(data_, device_.index);
  }
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) {
  if (nbytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) std::memcpy(dst, src, nbytes);
  else cuda::memcpy(dst, dst_device, src, src_device, nbytes);
}

MemoryStats memory_stats(Device device) {
  MemoryStats m;
  if (device.is_cuda()) {
    const cuda::MemoryStats s = cuda::memory_stats(device.index);
    m.live_bytes = s.used_bytes;
    m.live_peak_bytes = s.used_peak_bytes;
    m.cached_bytes = s.reserved_bytes - std::min(s.reserved_bytes, s.used_bytes);
    m.cached_peak_bytes = s.reserved_peak_bytes - std::min(s.reserved_peak_bytes, s.used_peak_bytes);
    m.held_peak_bytes = s.reserved_peak_bytes;
    return m;
  }
  HostCache& c = host_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  m.live_bytes = c.live;
  m.live_peak_bytes = c.live_peak;
  m.cached_bytes = c.cached;
  m.cached_peak_bytes = c.cached_peak;
  m.held_peak_bytes = c.held_peak;
  m.cache_hits = c.hits;
  m.cache_misses = c.misses;
  return m;
}

void reset_peak_memory_stats(Device device) {
  if (device.is_cuda()) return cuda::reset_peak_memory_stats(device.index);
  HostCache& c = host_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.live_peak = c.live;
  c.cached_peak = c.cached;
  c.held_peak = c.live + c.cached;
}

size_t release_cached_memory(Device device) {
  if (device.is_cuda()) return cuda::release_cached_memory(device.index);
  HostCache& c = host_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  const size_t released = c.cached;
  while (!c.blocks.empty()) evict_oldest(c);
  c.high_water = c.live;
  return released;
}

size_t resident_bytes() { return status_bytes("VmRSS:"); }
size_t peak_resident_bytes() { return status_bytes("VmHWM:"); }

Device Device::parse(const std::string& s) {
  if (s == "cpu") return cpu();
  if (s == "cuda") return cuda(0);
  // At most 9 digits, so that std::stoi cannot overflow.
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5 && s.size() <= 14 &&
      s.find_first_not_of("0123456789", 5) == std::string::npos)
    return cuda(std::stoi(s.substr(5)));
  REMATCH_FAIL("device: '", s, "' is not a device (expected cpu, cuda or cuda:N)");
}

bool cuda_available() { return cuda::device_count() > 0; }
int cuda_device_count() { return cuda::device_count(); }

std::string cuda_unavailable_reason() {
  if (!cuda::built_with_cuda())
    return "this build has no CUDA backend (configure with -DREMATCH_CUDA=ON on a machine with the CUDA toolkit)";
  if (cuda::device_count() > 0) return "";
  const std::string error = cuda::device_query_error();
  return error.empty() ? "no CUDA device visible" : "no usable CUDA device: " + error;
}

Device usable_device(const std::string& spec, const std::string& flag) {
  Device d;
  try {
    d = Device::parse(spec);
  } catch (const Error& e) {
    REMATCH_FAIL(flag, ": ", e.what());
  }
  if (d.is_cpu()) return d;
  const int n = cuda::device_count();
  if (n == 0) REMATCH_FAIL(flag, " ", spec, ": ", cuda_unavailable_reason());
  REMATCH_CHECK(d.index < n, flag, " ", spec, ": only ", n, " CUDA device(s) visible");
  return d;
}

}  // namespace rematch
