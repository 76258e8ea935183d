#include "tensor/storage.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "tensor/cuda/runtime.h"
#include "tensor/error.h"

namespace rematch {

namespace {

// Host blocks of 1 MiB and more are kept after they are freed and handed out again for the same rounded
// size. A fresh large allocation is an mmap whose pages fault in (and are zeroed by the kernel) on first
// touch, which costs about as much as one pass over the data: without the cache an elementwise op on 16M
// floats pays that on every call. At most kCacheLimit bytes are held; beyond it the smallest blocks go back.
constexpr size_t kCacheMinBlock = size_t(1) << 20;
constexpr size_t kCacheLimit = size_t(1) << 30;

struct HostCache {
  std::mutex mutex;
  std::multimap<size_t, void*> blocks;
  size_t bytes = 0;
};

HostCache& host_cache() {
  static HostCache* cache = new HostCache;  // never destroyed: tensors in static objects may outlive it
  return *cache;
}

size_t host_block_size(size_t nbytes) {
  const size_t unit = nbytes >= kCacheMinBlock ? kCacheMinBlock : 64;  // aligned_alloc wants a multiple of 64
  return (nbytes + unit - 1) / unit * unit;
}

void* host_alloc(size_t nbytes) {
  const size_t size = host_block_size(nbytes);
  if (size >= kCacheMinBlock) {
    HostCache& c = host_cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.blocks.find(size);
    if (it != c.blocks.end()) {
      void* p = it->second;
      c.blocks.erase(it);
      c.bytes -= size;
      return p;
    }
  }
  void* p = std::aligned_alloc(64, size);
  REMATCH_CHECK(p != nullptr, "out of host memory: could not allocate ", nbytes, " bytes");
  return p;
}

void host_free(void* p, size_t nbytes) {
  const size_t size = host_block_size(nbytes);
  if (size >= kCacheMinBlock && size <= kCacheLimit) {
    HostCache& c = host_cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    while (c.bytes + size > kCacheLimit && !c.blocks.empty()) {
      c.bytes -= c.blocks.begin()->first;
      std::free(c.blocks.begin()->second);
      c.blocks.erase(c.blocks.begin());
    }
    c.blocks.emplace(size, p);
    c.bytes += size;
    return;
  }
  std::free(p);
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
