#include "train/cli/ot_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ot/ot.h"
#include "train/cli/app.h"
#include "train/cli/npy_output.h"
#include "train/cli/number_checks.h"

namespace rematch::cli {
namespace {

struct OtOptions {
  std::string cost, a, b, out, dummy = "l2rm", device = "cpu", stop = "marginal", domain = "log";
  double eps = 0, mass = 0, tol = 1e-6;
  int64_t max_iter = 1000, check_every = 1;
  bool mask_diagonal = false;
  CLI::Option* partial_opt = nullptr;
  CLI::Option* dummy_opt = nullptr;
};

// A weight vector from its file, in the cost's dtype (a .npy written by NumPy is float64 by default).
Tensor load_weights(const std::string& path, const Tensor& cost) {
  if (path.empty()) return Tensor();
  return kernels::cast(load_npy(path), cost.dtype());
}

ot::DummyCost parse_dummy(const std::string& s) {
  if (s == "l2rm") return ot::DummyCost::L2RM;
  if (s == "l2rm_shifted") return ot::DummyCost::L2RMShifted;
  return ot::DummyCost::Zero;
}

void run_ot(const OtOptions& o, std::ostream& out) {
  if (o.dummy_opt->count() > 0 && o.partial_opt->count() == 0) throw UsageError("--dummy needs --partial MASS");
  if (o.b.empty() != o.a.empty()) throw UsageError("give both --a and --b, or neither (uniform weights)");
  require_replaceable_npy(o.out, "--out");
  const Device device = Device::parse(o.device);
  const Tensor cost_file = load_npy(o.cost);
  if (!is_floating(cost_file.dtype()) || (cost_file.dim() != 2 && cost_file.dim() != 3))
    throw UsageError("--cost " + o.cost + " holds " + cost_file.describe() +
                     ": expected a float32/float64 matrix [n, m] or batch [B, n, m]");
  const bool batched = cost_file.dim() == 3;
  const Tensor C = kernels::to_device(cost_file, device);
  const Tensor a = load_weights(o.a, cost_file), b = load_weights(o.b, cost_file);

  ot::SinkhornOptions so;
  so.epsilon = o.eps;
  so.max_iter = o.max_iter;
  so.tol = o.tol;
  so.check_every = o.check_every;
  so.stop = o.stop == "potential" ? ot::StopRule::PotentialChange : ot::StopRule::MarginalL1;
  so.domain = o.domain == "scaling" ? ot::Domain::Scaling : ot::Domain::Log;
  const int64_t n = C.size(-2), m = C.size(-1);
  if (o.mask_diagonal)  // mask = 1 − I: the positives of L2RM's rematch plan (docs/methods/l2rm.md §1.5 step 4)
    so.mask = kernels::to_device(kernels::unary(kernels::UnaryOp::LogicalNot, kernels::cast(eye(n, m), DType::Bool)),
                                 device);
  ot::DummyOptions dummy;
  dummy.costs = parse_dummy(o.dummy);
  const bool partial = o.partial_opt->count() > 0;
  const auto move = [&](const Tensor& t) { return t.defined() ? kernels::to_device(t, device) : t; };

  const auto start = std::chrono::steady_clock::now();
  ot::BatchedSinkhornResult r;
  if (batched) {
    r = partial ? ot::partial_sinkhorn_batched(C, move(a), move(b), {o.mass}, so, dummy)
                : ot::sinkhorn_batched(C, move(a), move(b), so);
  } else {
    const ot::SinkhornResult one = partial ? ot::partial_sinkhorn(C, move(a), move(b), o.mass, so, dummy)
                                           : ot::sinkhorn(C, move(a), move(b), so);
    r.plan = one.plan;
    r.iterations = {one.iterations};
    r.marginal_error = {one.marginal_error};
    r.converged = {static_cast<uint8_t>(one.converged)};
  }
  // The solve returns after its results are on the host (one synchronisation on a CUDA device), so the time
  // is the solve's; the plan is copied to the host once, for the file and the total below.
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const Tensor plan = kernels::to_device(r.plan, Device::cpu());
  save_npy(o.out, plan);

  const int64_t problems = static_cast<int64_t>(r.iterations.size());
  const int64_t converged = std::count(r.converged.begin(), r.converged.end(), uint8_t{1});
  const auto [it_min, it_max] = std::minmax_element(r.iterations.begin(), r.iterations.end());
  const double worst = *std::max_element(r.marginal_error.begin(), r.marginal_error.end());
  if (partial) out << "partial OT (dummy costs " << o.dummy << ", mass " << o.mass << ")";
  else out << "OT";
  out << ", " << o.domain << " domain, eps " << o.eps << ", " << dtype_name(C.dtype()) << " on " << device.str()
      << ": cost " << C.shape_str() << (o.mask_diagonal ? ", diagonal masked" : "") << "\n";
  if (problems == 1) {
    out << "  iterations:     " << r.iterations[0] << (converged ? " (converged)" : " (max_iter reached)") << "\n";
  } else {
    out << "  iterations:     " << *it_min << " to " << *it_max << "; " << converged << " of " << problems
        << " problems converged\n";
  }
  out << "  marginal error: " << worst << (problems > 1 ? " (largest)" : "") << " (L1, row marginals; stop rule "
      << o.stop << ", tol " << o.tol << ")\n"
      << "  time:           " << ms << " ms\n"
      << "  plan:           " << o.out << " " << plan.shape_str() << ", total mass "
      << kernels::reduce(kernels::ReduceOp::Sum, kernels::cast(plan, DType::Float64), {}, false).item<double>()
      << "\n";
}

}  // namespace

void add_ot_command(CLI::App& app, std::ostream& out) {
  auto o = std::make_shared<OtOptions>();
  CLI::App* cmd = app.add_subcommand("ot", "Solve entropic optimal transport (Sinkhorn) for a cost matrix or a batch");
  cmd->add_option("--cost", o->cost, "Cost .npy: [n, m] or a batch [B, n, m], float32 or float64")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--a", o->a, "Row weights .npy [n] or [B, n] (default uniform)")->check(CLI::ExistingFile);
  cmd->add_option("--b", o->b, "Column weights .npy [m] or [B, m] (default uniform)")->check(CLI::ExistingFile);
  cmd->add_option("--eps", o->eps, "Entropic regularisation epsilon (L2RM's --reg: 0.01 on F30K, 0.07 default)")
      ->required()
      ->check(kPositive);
  o->partial_opt = cmd->add_option("--partial", o->mass, "Transport only this mass (partial OT, dummy row/column)")
                       ->check(kPositive);
  o->dummy_opt = cmd->add_option("--dummy", o->dummy,
                                 "Dummy costs of --partial: l2rm (xi = 100 max C, corner 2 xi + max C), l2rm_shifted "
                                 "(same plan, xi subtracted), zero (UOT-RCL Eq. 14)")
                     ->capture_default_str()
                     ->check(CLI::IsMember({"l2rm", "l2rm_shifted", "zero"}));
  cmd->add_flag("--mask_diagonal", o->mask_diagonal, "Forbid the diagonal (L2RM's masked positives): exactly zero mass");
  cmd->add_option("--device", o->device, "cpu or cuda[:N]")->capture_default_str();
  cmd->add_option("--out", o->out, "Output plan .npy (the real block for --partial)")->required();
  cmd->add_option("--max_iter", o->max_iter, "Most Sinkhorn sweeps")->capture_default_str()->check(kPositiveCount);
  cmd->add_option("--tol", o->tol, "Stopping tolerance (0: run exactly --max_iter sweeps)")
      ->capture_default_str()
      ->check(kNonNegative);
  cmd->add_option("--stop", o->stop, "marginal: L1 row-marginal error < tol; potential: L2RM's ||u - u_prev|| < tol")
      ->capture_default_str()
      ->check(CLI::IsMember({"marginal", "potential"}));
  cmd->add_option("--check_every", o->check_every, "Test the stopping rule every k sweeps")
      ->capture_default_str()
      ->check(kPositiveCount);
  cmd->add_option("--domain", o->domain, "log (stable) or scaling (well-conditioned problems only)")
      ->capture_default_str()
      ->check(CLI::IsMember({"log", "scaling"}));
  cmd->callback([o, &out] { run_ot(*o, out); });
}

}  // namespace rematch::cli
