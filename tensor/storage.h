// A Storage is one device buffer shared by every view of it. It owns the memory (or holds the owner of an
// external buffer, such as a memory-mapped .npy file) and frees it when the last view goes away.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "tensor/device.h"

namespace rematch {

class Storage {
 public:
  // Allocates `nbytes` on `device` (64-byte aligned on the host; stream-ordered pool on CUDA).
  Storage(size_t nbytes, Device device);
  // Wraps memory someone else owns; `release` runs when the storage dies.
  Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  std::function<void(void*)> release_;
};

// Byte copy between any two devices (host↔host, host↔device, device↔device).
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes);

}  // namespace rematch
