// DLPack in: the capsule a framework's __dlpack__() returns (NumPy, PyTorch on the CPU or a CUDA device) becomes
// a rematch Tensor over the same memory, with the producer's sizes and strides — nothing is copied. The capsule
// is renamed "used_dltensor", the protocol's sign that a consumer took it over, and the producer's deleter runs
// when the last rematch view of the memory goes away.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "tensor/tensor.h"

namespace rematch::python {

namespace py = pybind11;

// `what` names the argument in errors ("C", "mask", ...): TypeError for a dtype rematch has no name for or memory
// that is neither the host's nor a CUDA device's, ValueError for a consumed capsule, negative strides or a CUDA
// device this build or machine cannot use.
Tensor import_dlpack(const py::capsule& capsule, const std::string& what);

// None → an undefined Tensor (the solvers' "not given"); a capsule as import_dlpack.
Tensor import_optional(const py::object& capsule_or_none, const std::string& what);

}  // namespace rematch::python
