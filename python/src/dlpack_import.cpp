#include "python/src/dlpack_import.h"

#include <dlpack/dlpack.h>

#include <cstring>
#include <memory>
#include <vector>

namespace rematch::python {
namespace {

// DLPack 0.8 added a bool type code; the Debian header (0.6) predates it.
constexpr uint8_t kDLBoolCode = 6;

// "float16", "int8", "complex64", "float32x4" — how an error names a DLPack type rematch does not read.
std::string dlpack_type_name(const DLDataType& t) {
  const char* code = nullptr;
  switch (t.code) {
    case kDLInt: code = "int"; break;
    case kDLUInt: code = "uint"; break;
    case kDLFloat: code = "float"; break;
    case kDLBfloat: code = "bfloat"; break;
    case kDLComplex: code = "complex"; break;
    case kDLBoolCode: code = "bool"; break;
    default: return detail::concat("DLPack type code ", int(t.code), " of ", int(t.bits), " bits");
  }
  return detail::concat(code, int(t.bits), t.lanes == 1 ? std::string() : detail::concat("x", t.lanes));
}

DType dtype_from_dlpack(const DLDataType& t, const std::string& what) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 32) return DType::Float32;
    if (t.code == kDLFloat && t.bits == 64) return DType::Float64;
    if (t.code == kDLInt && t.bits == 32) return DType::Int32;
    if (t.code == kDLInt && t.bits == 64) return DType::Int64;
    if (t.code == kDLUInt && t.bits == 8) return DType::UInt8;
    if (t.code == kDLBoolCode && t.bits == 8) return DType::Bool;
  }
  throw py::type_error(what + ": " + dlpack_type_name(t) +
                       " is not a dtype rematch reads (float32, float64, int32, int64, uint8 or bool); convert it first");
}

Device device_from_dlpack(const DLDevice& d, const std::string& what) {
  if (d.device_type == kDLCPU) return Device::cpu();
  // The error says why a CUDA array cannot be used here: a build without CUDA, or no such device.
  if (d.device_type == kDLCUDA) return usable_device("cuda:" + std::to_string(d.device_id), what);
  throw py::type_error(what + ": the array lives on DLPack device type " + std::to_string(int(d.device_type)) +
                       "; rematch reads host (CPU) and CUDA memory — move it to one of those first");
}

}  // namespace

Tensor import_dlpack(const py::capsule& capsule, const std::string& what) {
  if (std::strcmp(capsule.name(), "dltensor") != 0)
    throw py::value_error(what + ": the DLPack capsule was already consumed (call __dlpack__() again for a fresh one)");
  auto* managed = static_cast<DLManagedTensor*>(capsule.get_pointer());
  const DLTensor& t = managed->dl_tensor;
  const DType dtype = dtype_from_dlpack(t.dtype, what);
  const Device device = device_from_dlpack(t.device, what);

  Shape sizes(t.shape, t.shape + t.ndim);
  Shape strides = t.strides ? Shape(t.strides, t.strides + t.ndim) : contiguous_strides(sizes);
  // The storage spans the elements the view can reach: 1 + Σ (size − 1)·stride, or nothing when one size is 0.
  int64_t extent = 1;
  for (int d = 0; d < t.ndim; ++d) {
    if (sizes[d] == 0) extent = 0;
    if (strides[d] < 0)
      throw py::value_error(what + ": negative strides (a reversed view) are not supported; pass a contiguous copy");
  }
  for (int d = 0; extent > 0 && d < t.ndim; ++d) extent += (sizes[d] - 1) * strides[d];
  void* data = static_cast<char*>(t.data) + t.byte_offset;

  // From here on rematch owns the memory: the capsule's destructor leaves it alone, the storage calls the deleter.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  auto release = [managed](void*) {
    if (!managed->deleter) return;
    py::gil_scoped_acquire gil;  // NumPy's deleter drops a Python reference
    managed->deleter(managed);
  };
  auto storage = std::make_shared<Storage>(data, static_cast<size_t>(extent) * dtype_size(dtype), device, release);
  return make_tensor(std::move(storage), std::move(sizes), std::move(strides), 0, dtype);
}

Tensor import_optional(const py::object& capsule_or_none, const std::string& what) {
  if (capsule_or_none.is_none()) return Tensor();
  return import_dlpack(capsule_or_none.cast<py::capsule>(), what);
}

}  // namespace rematch::python
