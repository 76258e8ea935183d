// DLPack out: a rematch Tensor handed to Python as a `Buffer`, an object with __dlpack__ / __dlpack_device__, so
// that torch.from_dlpack wraps rematch's own memory without a copy; the tensor it makes keeps the buffer alive.
// A host Buffer also has NumPy's __array_interface__, which numpy.asarray uses instead: NumPy < 2 makes every
// array it takes through DLPack read-only, and a plan the caller cannot scale in place would be a trap. (Not the
// buffer protocol: pybind11 cannot report an error from it, and a CUDA Buffer must refuse NumPy.) On a CUDA device the consumer's stream is made to wait for rematch's work before it
// reads, and rematch's stream waits for the consumer's before the buffer is freed (stream-ordered, on rematch's
// stream) once the array dies.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

#include "tensor/tensor.h"

namespace rematch::python {

namespace py = pybind11;

class Buffer {
 public:
  explicit Buffer(Tensor tensor) : tensor_(std::move(tensor)) {}

  // `stream` as in the DLPack protocol: None (the legacy default stream), -1 (no ordering), 1, 2 or a
  // cudaStream_t of the consumer; must be None for host memory.
  py::capsule dlpack(const py::object& stream) const;
  py::tuple dlpack_device() const;
  // NumPy's array interface (version 3) over the memory, writable; TypeError for a CUDA buffer.
  py::dict array_interface() const;
  // Address of element 0: what the tests compare with the array a consumer made, to show nothing was copied.
  uintptr_t data_ptr() const { return reinterpret_cast<uintptr_t>(tensor_.raw_data()); }

 private:
  Tensor tensor_;
};

void bind_buffer(py::module_& m);

}  // namespace rematch::python
