// rematch._core.sinkhorn and partial_sinkhorn: one problem [n, m] goes to ot::sinkhorn / ot::partial_sinkhorn, a
// batch [B, n, m] to the batched forms, solved where C lives (the fused CUDA kernels for a CUDA array).
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "ot/ot.h"
#include "python/src/bindings.h"
#include "python/src/dlpack_export.h"
#include "python/src/dlpack_import.h"

namespace rematch::python {
namespace {

struct Problem {
  Tensor C, a, b, mask;
  bool batched() const { return C.dim() == 3; }
};

Problem import_problem(const std::string& op, const py::capsule& C, const py::object& a, const py::object& b,
                       const py::object& mask) {
  Problem p;
  p.C = import_dlpack(C, "C");
  if (!is_floating(p.C.dtype())) throw py::type_error(op + ": C must be float32 or float64, got " + p.C.describe());
  if (p.C.dim() != 2 && p.C.dim() != 3)
    throw py::value_error(op + ": C must be one cost matrix [n, m] or a batch [B, n, m], got " + p.C.describe());
  p.a = import_optional(a, "a");
  p.b = import_optional(b, "b");
  p.mask = import_optional(mask, "mask");
  for (const auto& [w, name] : {std::pair{&p.a, "a"}, std::pair{&p.b, "b"}})
    if (w->defined() && w->dtype() != p.C.dtype())
      throw py::type_error(op + ": " + name + " is " + w->describe() + " but C is " + p.C.describe() +
                           "; pass the weights in C's dtype");
  if (p.mask.defined() && p.mask.dtype() != DType::Bool && p.mask.dtype() != DType::UInt8)
    throw py::type_error(op + ": mask must be bool (True where transport is allowed), got " + p.mask.describe());
  return p;
}

ot::StopRule parse_stop(const std::string& op, const std::string& stop) {
  if (stop == "marginal") return ot::StopRule::MarginalL1;
  if (stop == "potential") return ot::StopRule::PotentialChange;
  throw py::value_error(op + ": stop = '" + stop +
                        "' is not a stopping rule; use 'marginal' (L1 error of the row marginals < tol) or "
                        "'potential' (L2RM's rule: ||f - f_prev||_2 < tol)");
}

ot::Domain parse_domain(const std::string& op, const std::string& domain) {
  if (domain == "log") return ot::Domain::Log;
  if (domain == "scaling") return ot::Domain::Scaling;
  throw py::value_error(op + ": domain = '" + domain + "' is not a domain; use 'log' (stable) or 'scaling'");
}

ot::DummyCost parse_dummy(const std::string& op, const std::string& dummy) {
  // L2RM's plan through the shifted costs: the same plan to rounding, and safe in float32 (ot/partial.h).
  if (dummy == "l2rm") return ot::DummyCost::L2RMShifted;
  if (dummy == "zero") return ot::DummyCost::Zero;
  throw py::value_error(op + ": dummy = '" + dummy +
                        "' is not a dummy cost; use 'l2rm' (L2RM's xi = 100 max C, corner 2 xi + max C) or 'zero' "
                        "(UOT-RCL Eq. 14)");
}

// The options as the Python arguments name them (ot::detail::check_options in ot/batched.cpp says "epsilon" and
// the C++ field).
ot::SinkhornOptions options(const std::string& op, double eps, int64_t max_iter, double tol, ot::StopRule stop,
                            const Tensor& mask) {
  if (!(std::isfinite(eps) && eps > 0))
    throw py::value_error(detail::concat(op, ": eps = ", eps, " must be finite and > 0 (the entropic regularisation)"));
  ot::SinkhornOptions o;
  o.epsilon = eps;
  o.max_iter = max_iter;
  o.tol = tol;
  o.stop = stop;
  o.mask = mask;
  return o;
}

// Ctrl-C during a solve. The CPU solver asks this after a problem's first sweep and then every 2^16 entries swept
// (SinkhornOptions::interrupted, ot/sinkhorn.h); on the thread that called from Python, at most every 50 ms, it
// takes the GIL and runs Python's signal handlers (PyErr_CheckSignals acts on the main thread only). An exception
// they raise — KeyboardInterrupt for SIGINT — stops every problem of the call (the other threads of a batch see
// `raised_`) and is raised by solve() below once the solver has returned. The engine never sees Python, only this
// callback.
class InterruptCheck {
 public:
  bool operator()() {
    if (raised_.load(std::memory_order_relaxed)) return true;
    if (std::this_thread::get_id() != caller_) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return false;
    next_ = now + std::chrono::milliseconds(50);
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return false;
    PyErr_Fetch(&type_, &value_, &trace_);
    raised_.store(true, std::memory_order_relaxed);
    return true;
  }
  // With the GIL held: the handlers' exception, if they raised one, becomes the call's.
  void rethrow_if_raised() {
    if (!raised_.load()) return;
    PyErr_Restore(type_, value_, trace_);
    type_ = value_ = trace_ = nullptr;
    throw py::error_already_set();
  }

 private:
  const std::thread::id caller_ = std::this_thread::get_id();
  std::chrono::steady_clock::time_point next_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  std::atomic<bool> raised_{false};
  PyObject *type_ = nullptr, *value_ = nullptr, *trace_ = nullptr;
};

// Runs the solve without the GIL and with `o` checking for Ctrl-C; a rematch::Error becomes a ValueError worded for
// Python (the solver's "Domain::Log" is the argument domain="log" here), and an interrupt raises KeyboardInterrupt.
template <typename Solve> auto solve(const Device& device, ot::SinkhornOptions& o, Solve&& run) {
  InterruptCheck check;
  o.interrupted = [&check] { return check(); };
  try {
    auto result = without_gil(device, [&] { return run(o); });
    check.rethrow_if_raised();
    return result;
  } catch (const Error& e) {
    check.rethrow_if_raised();
    std::string message = e.what();
    const std::string cpp = "Domain::Log";
    for (size_t at = message.find(cpp); at != std::string::npos; at = message.find(cpp, at))
      message.replace(at, cpp.size(), "domain=\"log\"");
    throw py::value_error(message);
  }
}

// (P, f, g, iterations, error, converged): per-problem lists for a batch, plain numbers for one problem.
py::tuple results(const ot::SinkhornResult& r) {
  return py::make_tuple(Buffer(r.plan), Buffer(r.f), Buffer(r.g), r.iterations, r.marginal_error, r.converged);
}

py::tuple results(const ot::BatchedSinkhornResult& r) {
  std::vector<bool> converged(r.converged.begin(), r.converged.end());
  return py::make_tuple(Buffer(r.plan), Buffer(r.f), Buffer(r.g), r.iterations, r.marginal_error, converged);
}

py::tuple sinkhorn(const py::capsule& C, const py::object& a, const py::object& b, double eps, int64_t max_iter,
                   double tol, const std::string& stop, const py::object& mask, const std::string& domain) {
  const std::string op = "rematch.ot.sinkhorn";
  const Problem p = import_problem(op, C, a, b, mask);
  ot::SinkhornOptions o = options(op, eps, max_iter, tol, parse_stop(op, stop), p.mask);
  o.domain = parse_domain(op, domain);
  if (p.batched())
    return results(solve(p.C.device(), o, [&](const auto& o) { return ot::sinkhorn_batched(p.C, p.a, p.b, o); }));
  return results(solve(p.C.device(), o, [&](const auto& o) { return ot::sinkhorn(p.C, p.a, p.b, o); }));
}

py::tuple partial_sinkhorn(const py::capsule& C, const std::vector<double>& mass, const py::object& a,
                           const py::object& b, double eps, const std::string& dummy, const py::object& mask,
                           int64_t max_iter, double tol, const std::string& stop) {
  const std::string op = "rematch.ot.partial_sinkhorn";
  const Problem p = import_problem(op, C, a, b, mask);
  ot::SinkhornOptions o = options(op, eps, max_iter, tol, parse_stop(op, stop), p.mask);
  ot::DummyOptions d;
  d.costs = parse_dummy(op, dummy);
  if (p.batched())
    return results(solve(p.C.device(), o, [&](const auto& o) {
      return ot::partial_sinkhorn_batched(p.C, p.a, p.b, mass, o, d);
    }));
  if (mass.size() != 1)
    throw py::value_error(op + ": C is one problem " + p.C.shape_str() + " but mass holds " +
                          std::to_string(mass.size()) + " values; give one number");
  return results(
      solve(p.C.device(), o, [&](const auto& o) { return ot::partial_sinkhorn(p.C, p.a, p.b, mass[0], o, d); }));
}

}  // namespace

void bind_ot(py::module_& m) {
  m.def("sinkhorn", &sinkhorn, py::arg("C"), py::arg("a"), py::arg("b"), py::arg("eps"), py::arg("max_iter"),
        py::arg("tol"), py::arg("stop"), py::arg("mask"), py::arg("domain"),
        "Entropic OT; rematch.ot.sinkhorn documents it. Returns (P, f, g, iterations, error, converged).");
  m.def("partial_sinkhorn", &partial_sinkhorn, py::arg("C"), py::arg("mass"), py::arg("a"), py::arg("b"),
        py::arg("eps"), py::arg("dummy"), py::arg("mask"), py::arg("max_iter"), py::arg("tol"), py::arg("stop"),
        "Partial entropic OT; rematch.ot.partial_sinkhorn documents it. Returns (P, f, g, iterations, error, "
        "converged).");
}

}  // namespace rematch::python
