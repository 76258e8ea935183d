// rematch._core, the compiled half of `import rematch`: rematch's errors become ValueError with their message
// (a wrong dtype or device kind is already a TypeError from the binders), and the binders of each area are
// registered.
#include <pybind11/pybind11.h>

#include "python/src/bindings.h"
#include "python/src/cuda_streams.h"
#include "python/src/dlpack_export.h"
#include "python/src/dlpack_import.h"
#include "tensor/error.h"

namespace rematch::python {

std::mutex& cuda_work_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace rematch::python

PYBIND11_MODULE(_core, m) {
  namespace py = pybind11;
  using namespace rematch::python;
  m.doc() = "rematch's compiled core; use rematch.ot and rematch.eval.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rematch::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  bind_buffer(m);
  bind_ot(m);
  bind_eval(m);
  m.def("cuda_stream", &rematch_stream, py::arg("device"),
        "rematch's CUDA stream on cuda:`device`, for a producer's __dlpack__(stream=...): the producer then orders "
        "its pending writes before rematch reads.");
  m.def(
      "share", [](const py::capsule& capsule) { return Buffer(import_dlpack(capsule, "x")); }, py::arg("capsule"),
      "The import and export every function here goes through, without the work in between: a Buffer over the memory "
      "of `capsule` (from x.__dlpack__()). The zero-copy tests compare its data_ptr with x's.");
}
