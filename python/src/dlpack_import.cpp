#include "python/src/dlpack_import.h"

#include "python/src/dlpack_abi.h"

#include <cstring>
#include <memory>
#include <vector>

namespace rematch::python {
namespace {

// "float16", "int8", "complex64", "float32x4" — how an error names a DLPack type rematch does not read.
std::string dlpack_type_name(const dlpack::DataType& t) {
  const char* code = nullptr;
  switch (t.code) {
    case dlpack::kInt: code = "int"; break;
    case dlpack::kUInt: code = "uint"; break;
    case dlpack::kFloat: code = "float"; break;
    case dlpack::kBfloat: code = "bfloat"; break;
    case dlpack::kComplex: code = "complex"; break;
    case dlpack::kBool: code = "bool"; break;
    default: return detail::concat("DLPack type code ", int(t.code), " of ", int(t.bits), " bits");
  }
  return detail::concat(code, int(t.bits), t.lanes == 1 ? std::string() : detail::concat("x", t.lanes));
}

DType dtype_from_dlpack(const dlpack::DataType& t, const std::string& what) {
  if (t.lanes == 1) {
    if (t.code == dlpack::kFloat && t.bits == 32) return DType::Float32;
    if (t.code == dlpack::kFloat && t.bits == 64) return DType::Float64;
    if (t.code == dlpack::kInt && t.bits == 32) return DType::Int32;
    if (t.code == dlpack::kInt && t.bits == 64) return DType::Int64;
    if (t.code == dlpack::kUInt && t.bits == 8) return DType::UInt8;
    if (t.code == dlpack::kBool && t.bits == 8) return DType::Bool;
  }
  throw py::type_error(what + ": " + dlpack_type_name(t) +
                       " is not a dtype rematch reads (float32, float64, int32, int64, uint8 or bool); convert it first");
}

Device device_from_dlpack(const dlpack::Device& d, const std::string& what) {
  if (d.device_type == dlpack::kCPU) return Device::cpu();
  // The error says why a CUDA array cannot be used here: a build without CUDA, or no such device.
  if (d.device_type == dlpack::kCUDA) return usable_device("cuda:" + std::to_string(d.device_id), what);
  throw py::type_error(what + ": the array lives on DLPack device type " + std::to_string(d.device_type) +
                       "; rematch reads host (CPU) and CUDA memory — move it to one of those first");
}

}  // namespace

Tensor import_dlpack(const py::capsule& capsule, const std::string& what) {
  if (std::strcmp(capsule.name(), "dltensor") != 0)
    throw py::value_error(what + ": the DLPack capsule was already consumed (call __dlpack__() again for a fresh one)");
  auto* managed = static_cast<dlpack::ManagedTensor*>(capsule.get_pointer());
  const dlpack::Tensor& t = managed->dl_tensor;
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
