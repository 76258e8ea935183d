#include "tensor/storage.h"

#include <cstdlib>
#include <cstring>

#include "tensor/cuda/runtime.h"
#include "tensor/error.h"

namespace rematch {

Storage::Storage(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  if (nbytes == 0) return;  // an empty tensor needs no memory on any device
  if (device.is_cpu()) {
    const size_t rounded = (nbytes + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
    data_ = std::aligned_alloc(64, rounded);
    REMATCH_CHECK(data_ != nullptr, "out of host memory: could not allocate ", nbytes, " bytes");
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
    if (device_.is_cpu()) std::free(data_);
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
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5 && s.find_first_not_of("0123456789", 5) == std::string::npos)
    return cuda(std::stoi(s.substr(5)));
  REMATCH_FAIL("device: '", s, "' is not a device (expected cpu, cuda or cuda:N)");
}

bool cuda_available() { return cuda::device_count() > 0; }
int cuda_device_count() { return cuda::device_count(); }

}  // namespace rematch
