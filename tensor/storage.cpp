#include "tensor/storage.h"

#include <malloc.h>
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

// Host blocks of 1 MiB and more are kept after they are freed and handed out again. A fresh large allocation is
// an mmap whose pages fault in (and are zeroed by the kernel) on first touch, which costs about as much as one
// pass over the data: without the cache an elementwise op on 16M floats pays that on every call. A request takes
//   1. the smallest cached block that fits it and is at most a sixteenth larger, whole;
//   2. else the head of the smallest larger block, whose tail stays cached;
//   3. else the cached blocks, largest first, moved next to each other with mremap (their resident pages move
//      with them: no faults, no zeroing), the last one's tail staying cached, with fresh pages for what they
//      lack (assemble()).
// (Exact sizes alone, before 2. and 3., missed one request in four in a training run whose batches differ in
// their longest caption; handing out blocks up to twice the request whole, one in ten, but those blocks count
// live at their size: 12 MiB of SGR's one-pass step peak at the reduced dims of bench/sgraf_step_bench.cpp.
// Without 2. and 3. a step's requests of one size found the cache full of blocks of other sizes: the SAF step
// there mapped 11 blocks afresh a step, 18,500 page faults, with the cache allowed only the high-water mark;
// with them none, a few hundred faults.)
//
// How much is kept (tensor/memory.h): live + cached never exceeds the high-water mark (the most that was live at
// once since the start or the last release_cached_memory()) and a sixteenth more. A fresh allocation that would
// pass that first gives back the blocks freed longest ago. (It used to keep up to 1 GiB whatever the peak: a run
// whose batches differ in shape filled it with blocks of sizes it never asked for again. Then a quarter above the
// high-water mark, which 1. alone needed: 9 fresh blocks a step for SGR against 19 with no room, at 25 % more
// memory held at the peak; with 2. and 3. a sixteenth leaves none: docs/memory.md §3.) Blocks above kCacheLimit
// are never kept, nor more than kCacheLimit in all.
//
// The large blocks are mapped and unmapped directly (mmap/munmap), so that a block given back leaves the
// resident set at once: from glibc's malloc, a freed block of a few MiB goes back to its heap (the mmap
// threshold rises with the first such free) and stays resident. Under AddressSanitizer they come from
// aligned_alloc, which it checks: 2. and 3. do not apply, and 1. takes blocks up to twice the request.
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
  // Never destroyed: tensors in static objects may outlive it.
  static HostCache* cache = new HostCache;
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

// The largest cached block handed out whole for a request of `size` bytes (rule 1 above): a sixteenth more where
// larger blocks can be split (rule 2), twice as much where they cannot (under AddressSanitizer).
size_t largest_whole(size_t size) { return kMapLargeBlocks ? size + size / 16 : 2 * size; }

// What live + cached may reach: the high-water mark and a sixteenth more (see the comment at the top).
size_t allowed(const HostCache& c) { return c.high_water + c.high_water / 16; }

// Gives back the cached block freed longest ago. Called with the lock held.
void evict_oldest(HostCache& c) {
  auto oldest = c.blocks.begin();
  for (auto it = c.blocks.begin(); it != c.blocks.end(); ++it)
    if (it->second.freed < oldest->second.freed) oldest = it;
  unmap_block(oldest->second.data, oldest->first);
  c.cached -= oldest->first;
  c.blocks.erase(oldest);
}

// A block of `size` bytes made of cached blocks, for a request no cached block serves whole (none is at least
// as large and at most twice as large): the head of the smallest larger block (its tail stays cached), else the
// cached blocks, largest first, moved next to each other with mremap (their pages move with them: no page
// faults, no zeroing), the last one's tail staying cached, and fresh pages for what they lack. Sets *reused to
// the bytes that came from the cache. Called with the lock held, for mapped blocks only; nullptr when out of
// memory.
void* assemble(HostCache& c, size_t size, size_t* reused) {
  *reused = 0;
  auto larger = c.blocks.lower_bound(size);
  if (larger != c.blocks.end()) {
    const CachedBlock block = larger->second;
    const size_t tail = larger->first - size;
    c.blocks.erase(larger);
    c.blocks.emplace(tail, CachedBlock{static_cast<char*>(block.data) + size, block.freed});
    c.cached -= size;
    *reused = size;
    return block.data;
  }
  // An address range only (no access, nothing reserved): the moved blocks replace it, fresh pages its rest.
  void* range = ::mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (range == MAP_FAILED) return nullptr;
  char* dst = static_cast<char*>(range);
  while (*reused < size && !c.blocks.empty()) {
    const auto largest = std::prev(c.blocks.end());
    const CachedBlock block = largest->second;
    const size_t take = std::min(largest->first, size - *reused), rest = largest->first - take;
    if (::mremap(block.data, take, take, MREMAP_MAYMOVE | MREMAP_FIXED, dst + *reused) == MAP_FAILED) break;
    c.blocks.erase(largest);
    if (rest > 0) c.blocks.emplace(rest, CachedBlock{static_cast<char*>(block.data) + take, block.freed});
    c.cached -= take;
    *reused += take;
  }
  // Fresh pages for the rest (they fault in on first touch, as a miss's do).
  if (*reused < size && ::mmap(dst + *reused, size - *reused, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
    ::munmap(dst, size);  // the blocks moved there too (they have left the cache): the caller maps afresh
    return nullptr;
  }
  return dst;
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
  if (it != c.blocks.end() && it->first <= largest_whole(size)) {
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
  if (kMapLargeBlocks && c.cached > 0) {
    size_t reused = 0;
    void* p = assemble(c, size, &reused);
    if (p != nullptr) {
      ++(reused == size ? c.hits : c.misses);
      c.live += size;
      c.high_water = std::max(c.high_water, c.live);
      c.note_peaks();
      return p;
    }
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

// glibc's malloc, which the blocks under 1 MiB come from, by default maps a block of 128 KiB or more afresh and
// raises that threshold to the largest block freed so far, and gives the top of its heap back past twice the
// threshold: a loop that allocates and frees the same few hundred KiB gives its pages back and faults them in
// again on every turn. The caption-by-caption scoring (models/similarity_encoder.cpp) is such a loop: its SGR
// step at the reduced dims of bench/sgraf_step_bench.cpp took 21,600 page faults (84 MiB of pages zeroed), and
// takes 1,400 with these settings, for the same step memory: blocks of 1 MiB and more, which this file maps
// itself, are mapped by malloc too (others' large buffers), smaller ones come from the heap, and the heap keeps
// up to 8 MiB free at its top. A process-wide setting, so the programs call it (train/main.cpp,
// bench/sgraf_step_bench.cpp), not the library: a host process such as python with PyTorch keeps glibc's adaptive
// threshold for its own buffers.
void tune_host_malloc() {
#if defined(__GLIBC__)
  if (!kMapLargeBlocks) return;  // AddressSanitizer's allocator: not glibc's
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kCacheMinBlock));
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
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
