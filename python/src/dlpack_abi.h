// The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html): the unversioned DLManagedTensor that every
// producer's __dlpack__() returns when no max_version is asked for (NumPy ≥ 1.22, PyTorch ≥ 1.10), declared here
// from the specification so that the module needs no dlpack header package. Layouts and numbers are fixed by the
// protocol; the static_asserts pin the sizes on the 64-bit platforms rematch builds for.
#pragma once

#include <cstdint>

namespace rematch::python::dlpack {

// DLDeviceType: the ones rematch reads (others are refused by number).
constexpr int32_t kCPU = 1;
constexpr int32_t kCUDA = 2;

// DLDataTypeCode.
enum TypeCode : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kOpaqueHandle = 3, kBfloat = 4, kComplex = 5, kBool = 6 };

struct Device {
  int32_t device_type;
  int32_t device_id;
};

struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null: compact row-major
  uint64_t byte_offset;
};

struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

static_assert(sizeof(Tensor) == 48 && sizeof(ManagedTensor) == 64, "DLPack layout");

}  // namespace rematch::python::dlpack
