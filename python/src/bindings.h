// The functions of rematch._core, one binder per area; python/rematch/*.py give them their Python signatures,
// docstrings and array conversions. Arrays arrive as DLPack capsules (dlpack_import.h) and results leave as
// Buffers (dlpack_export.h). rematch::Error becomes ValueError (module.cpp); a wrong dtype is a TypeError raised
// here, before the engine sees it.
#pragma once

#include <pybind11/pybind11.h>

#include <mutex>
#include <utility>

#include "tensor/tensor.h"

namespace rematch::python {

namespace py = pybind11;

void bind_ot(py::module_& m);
void bind_eval(py::module_& m);

// CUDA work from several Python threads at once would interleave on rematch's one stream per device
// (tensor/cuda/runtime.h: one host thread per device at a time), so it is serialised; CPU work runs side by side.
std::mutex& cuda_work_mutex();

// Runs `work` with the GIL released (other Python threads run meanwhile) and, for data on a CUDA device, under
// cuda_work_mutex(). The arrays' memory stays alive: the caller holds their tensors.
template <typename Work> auto without_gil(const Device& device, Work&& work) {
  py::gil_scoped_release nogil;
  std::unique_lock<std::mutex> lock(cuda_work_mutex(), std::defer_lock);
  if (device.is_cuda()) lock.lock();
  return std::forward<Work>(work)();
}

}  // namespace rematch::python
