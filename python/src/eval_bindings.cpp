// rematch._core.recall_json and mean_average_precision: the evaluation of `rematch eval` and of the
// class-labelled benchmarks (train/eval/), on arrays from Python.
#include <string>

#include "python/src/bindings.h"
#include "python/src/dlpack_import.h"
#include "train/eval/map_metric.h"
#include "train/eval/retrieval_metrics.h"

namespace rematch::python {
namespace {

Tensor import_features(const std::string& op, const py::capsule& capsule, const std::string& what) {
  Tensor t = import_dlpack(capsule, what);
  if (!is_floating(t.dtype())) throw py::type_error(op + ": " + what + " must be float32 or float64, got " + t.describe());
  return t;
}

Tensor import_labels(const std::string& op, const py::capsule& capsule, const std::string& what) {
  Tensor t = import_dlpack(capsule, what);
  if (!is_index_dtype(t.dtype()))
    throw py::type_error(op + ": " + what + " must hold integer class labels (int32 or int64), got " + t.describe());
  return t;
}

// The JSON object `rematch eval --json` prints, from the same code (rematch.eval.recall parses it).
std::string recall_json(const py::capsule& sims_capsule, int64_t captions_per_image) {
  const std::string op = "rematch.eval.recall";
  const Tensor sims = import_features(op, sims_capsule, "sims");
  const eval::RetrievalMetrics m =
      without_gil(sims.device(), [&] { return eval::retrieval_metrics(sims, captions_per_image); });
  return eval::metrics_json(m);
}

double mean_average_precision(const py::capsule& query, const py::capsule& gallery, const py::capsule& query_labels,
                              const py::capsule& gallery_labels) {
  const std::string op = "rematch.eval.mean_average_precision";
  const Tensor q = import_features(op, query, "query"), g = import_features(op, gallery, "gallery");
  const Tensor ql = import_labels(op, query_labels, "query_labels");
  const Tensor gl = import_labels(op, gallery_labels, "gallery_labels");
  return without_gil(q.device(), [&] { return eval::map_at_k(q, ql, g, gl, 0); });
}

}  // namespace

void bind_eval(py::module_& m) {
  m.def("recall_json", &recall_json, py::arg("sims"), py::arg("captions_per_image"),
        "The metrics of `rematch eval --json` as that JSON text; rematch.eval.recall documents them.");
  m.def("mean_average_precision", &mean_average_precision, py::arg("query"), py::arg("gallery"),
        py::arg("query_labels"), py::arg("gallery_labels"),
        "mAP@all; rematch.eval.mean_average_precision documents it.");
}

}  // namespace rematch::python
