#include "python/src/dlpack_export.h"

#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "python/src/cuda_streams.h"
#include "python/src/dlpack_abi.h"

namespace rematch::python {
namespace {

// What one __dlpack__() call hands out: the DLPack struct and everything its pointers point into.
struct Exported {
  dlpack::ManagedTensor managed{};
  Tensor tensor;                 // holds the storage while the consumer's array lives
  std::vector<int64_t> shape, strides;
  uintptr_t consumer_stream = 0;  // 0: nothing to wait for before the free
};

void delete_exported(dlpack::ManagedTensor* managed) {
  auto* e = static_cast<Exported*>(managed->manager_ctx);
  if (e->consumer_stream) {
    // A deleter cannot report an error (it may run on any thread, inside the consumer's C++), so a failing
    // CUDA call here is dropped; it would have failed the consumer's own next call on that device anyway.
    try {
      rematch_waits_for_consumer(e->tensor.device().index, e->consumer_stream);
    } catch (...) {
    }
  }
  delete e;
}

// An unconsumed capsule still owns its tensor; a consumed one was renamed and is the consumer's to delete.
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  managed->deleter(managed);
}

dlpack::DataType dlpack_dtype(DType t) {
  switch (t) {
    case DType::Float32: return {dlpack::kFloat, 32, 1};
    case DType::Float64: return {dlpack::kFloat, 64, 1};
    case DType::Int32: return {dlpack::kInt, 32, 1};
    case DType::Int64: return {dlpack::kInt, 64, 1};
    case DType::UInt8: return {dlpack::kUInt, 8, 1};
    case DType::Bool: return {dlpack::kBool, 8, 1};
  }
  return {};
}

// The consumer's stream from the protocol's `stream` argument; 0 when no ordering is wanted.
uintptr_t consumer_stream(const py::object& stream) {
  if (stream.is_none()) return 1;  // the protocol's default: the legacy default stream
  if (!py::isinstance<py::int_>(stream))
    throw py::type_error("__dlpack__: stream must be an int or None, got " + py::repr(stream).cast<std::string>());
  const int64_t s = stream.cast<int64_t>();
  if (s == -1) return 0;
  if (s == 0)
    throw py::value_error("__dlpack__: stream 0 is ambiguous; pass 1 (legacy default stream), 2 (per-thread default "
                          "stream), a cudaStream_t or -1 (no synchronisation)");
  return static_cast<uintptr_t>(s);
}

}  // namespace

py::capsule Buffer::dlpack(const py::object& stream) const {
  auto e = std::make_unique<Exported>();
  e->tensor = tensor_;
  e->shape = tensor_.sizes();
  e->strides = tensor_.strides();
  const Device device = tensor_.device();
  if (device.is_cuda()) {
    e->consumer_stream = consumer_stream(stream);
    if (e->consumer_stream) consumer_waits_for_rematch(device.index, e->consumer_stream);
  } else if (!stream.is_none()) {
    throw py::value_error("__dlpack__: stream must be None for host memory (got " + py::str(stream).cast<std::string>() +
                          ")");
  }
  dlpack::Tensor& t = e->managed.dl_tensor;
  t.data = tensor_.raw_data();
  t.device = device.is_cuda() ? dlpack::Device{dlpack::kCUDA, device.index} : dlpack::Device{dlpack::kCPU, 0};
  t.ndim = static_cast<int>(tensor_.dim());
  t.dtype = dlpack_dtype(tensor_.dtype());
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = delete_exported;
  PyObject* capsule = PyCapsule_New(&e->managed, "dltensor", capsule_destructor);
  if (!capsule) throw py::error_already_set();
  e.release();  // the capsule (or, once consumed, the consumer) owns it now
  return py::reinterpret_steal<py::capsule>(capsule);
}

py::tuple Buffer::dlpack_device() const {
  const Device d = tensor_.device();
  return d.is_cuda() ? py::make_tuple(dlpack::kCUDA, d.index) : py::make_tuple(dlpack::kCPU, 0);
}

py::dict Buffer::array_interface() const {
  if (tensor_.device().is_cuda())
    throw py::type_error("Buffer: " + tensor_.describe() +
                         " lives on a CUDA device, which NumPy cannot read; use torch.from_dlpack");
  const auto itemsize = static_cast<int64_t>(dtype_size(tensor_.dtype()));
  const char* typestr = nullptr;  // little-endian, as every platform rematch builds for
  switch (tensor_.dtype()) {
    case DType::Float32: typestr = "<f4"; break;
    case DType::Float64: typestr = "<f8"; break;
    case DType::Int32: typestr = "<i4"; break;
    case DType::Int64: typestr = "<i8"; break;
    case DType::UInt8: typestr = "|u1"; break;
    case DType::Bool: typestr = "|b1"; break;
  }
  py::list strides;
  for (const int64_t s : tensor_.strides()) strides.append(s * itemsize);
  py::dict d;
  d["version"] = 3;
  d["shape"] = py::tuple(py::cast(tensor_.sizes()));
  d["strides"] = py::tuple(strides);
  d["typestr"] = typestr;
  d["data"] = py::make_tuple(data_ptr(), false);  // false: not read-only
  return d;
}

void bind_buffer(py::module_& m) {
  py::class_<Buffer>(m, "Buffer",
                     "rematch's own memory (a plan, potentials) for torch.from_dlpack or numpy.asarray, which wrap "
                     "it without a copy. The rematch.ot functions return such arrays already.")
      .def_property_readonly("__array_interface__", &Buffer::array_interface,
                             "NumPy's view of host memory (numpy.asarray): writable, no copy.")
      .def("__dlpack__", &Buffer::dlpack, py::arg("stream") = py::none(),
           "A DLPack capsule over the buffer; on a CUDA device `stream` (the consumer's) waits for rematch's work.")
      .def("__dlpack_device__", &Buffer::dlpack_device, "(device type, index) as DLPack numbers them: (1, 0) host, (2, N) cuda:N.")
      .def_property_readonly("data_ptr", &Buffer::data_ptr, "Address of the first element.");
}

}  // namespace rematch::python
