// Entropic optimal transport between two weighted point sets by Sinkhorn's alternating projections.
//
// For a cost C (n×m), weights a (n) and b (m) with Σa = Σb and ε > 0 the solver returns the plan
//   P_ij = exp((f_i + g_j − C_ij) / ε)      (Cuturi 2013: P = diag(u)·exp(−C/ε)·diag(v), f = ε log u, g = ε log v)
// with P·1 ≈ a and Pᵀ·1 = b, where f, g are the log-potentials in cost units. One iteration ("sweep") is the
// row half-step f_i = ε log a_i − ε LSE_j((g_j − C_ij)/ε) followed by the column half-step
// g_j = ε log b_j − ε LSE_i((f_i − C_ij)/ε); after a sweep the column marginals are exact and the row
// marginals carry the error.
//
// Numerics: the log domain (default) keeps log-potentials and evaluates each LSE max-shifted, so ξ/ε = 10⁴
// (L2RM's dummy cost, docs/methods/l2rm.md §1.5) neither overflows nor underflows; between those exact sweeps it caches
// the kernel at the current potentials (absorption, Schmitzer 2019) so that most sweeps are two matrix-vector
// products — the same iterates to rounding (details in ot/cpu/sinkhorn.cpp). The scaling domain (u = a / Kv,
// v = b / Kᵀu with K = exp(−C/ε) fixed) fails once C/ε exceeds ~700 (float64) or ~87 (float32); it then
// stops with an error that says so rather than returning NaN.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "tensor/tensor.h"

namespace rematch::ot {

enum class Domain {
  Log,      // log-potentials, max-shifted log-sum-exp (no overflow for any C/ε; precision: see sinkhorn() below)
  Scaling,  // scalings u, v and K = exp(−C/ε): for well-conditioned problems only
};

enum class StopRule {
  // Σ_i |(P·1)_i − a_i| < tol, the L1 error of the row marginals (the columns are exact after a sweep).
  MarginalL1,
  // ‖f − f_prev‖₂ < tol between consecutive sweeps, f in cost units — L2RM's rule (docs/methods/l2rm.md §1.5:
  // `err = ‖u − u1‖₂ < 1e-3` after each full u-then-v sweep of `sinkhorn_log_domain`).
  PotentialChange,
};

struct SinkhornOptions {
  double epsilon = 0;          // entropic regularisation ε (L2RM's λ / `reg`); must be set, > 0
  int64_t max_iter = 1000;     // sweeps at most
  double tol = 1e-6;           // see StopRule; tol = 0 never stops early: exactly max_iter sweeps
  StopRule stop = StopRule::MarginalL1;
  int64_t check_every = 1;     // test the stopping rule after every check_every-th sweep (and the last)
  Domain domain = Domain::Log;
  // Optional bool or uint8 mask shaped like C (nonzero: the entry may carry mass). A masked entry gets
  // exactly zero mass and its cost is never read. A row (column) with positive weight whose every entry is
  // masked, or whose unmasked entries all meet zero-weight columns (rows), makes the problem infeasible and
  // is an Error naming the row (column). Zero-weight rows and columns are allowed: they get zero mass and
  // potential −inf.
  Tensor mask;
  // Optional warm start: initial f (shaped like a) and g (shaped like b), in cost units; default zeros.
  // The first PotentialChange test compares against f0.
  Tensor f0, g0;
  // Optional interrupt check, asked by a CPU solve on the thread solving the problem (OpenMP's threads at once for a
  // batch) after its first sweep and then about every 2^16 entries swept (every sweep of a large problem): true
  // stops the solve with an Error "interrupted". The Python module passes one that checks for Ctrl-C
  // (python/src/ot_bindings.cpp); the CUDA solvers run every sweep in one launch and never ask it.
  std::function<bool()> interrupted;
};

struct SinkhornResult {
  Tensor plan;                 // shaped like C, same dtype and device, detached; masked entries exactly 0
  Tensor f, g;                 // log-potentials in cost units: plan = exp((f_i + g_j − C_ij)/ε)
  int64_t iterations = 0;      // sweeps run
  double marginal_error = 0;   // Σ_i |(P·1)_i − a_i| after the last sweep, whatever the stopping rule
  bool converged = false;      // the stopping rule was met before max_iter ran out
};

// Solves one problem: C [n, m] (float32 or float64), a [n] and b [m] of C's dtype (undefined: uniform 1/n,
// 1/m). Costs may be negative (a constant shift of C does not change the plan); they must be finite where
// not masked. Σa must equal Σb to 1e-6 relative (1e-5 for float32). Errors name the offending entry. A plan
// whose column sums miss b by more than 1e-3 of Σb is an Error too: |C|/ε beyond what the dtype resolves
// (nearing 1e7 in float32, 4e15 in float64) leaves (f_i + g_j − C_ij)/ε no correct digit (ot/batched.cpp).
SinkhornResult sinkhorn(const Tensor& C, const Tensor& a, const Tensor& b, const SinkhornOptions& options);

// The CPU backend, one problem at a time, as the batched driver (ot/batched.cpp) calls it. Users call
// sinkhorn() or sinkhorn_batched(); this is exposed so the driver and the CPU solver can live apart.
namespace cpu {

// One problem as raw host memory, already shape-checked by the driver.
template <typename T> struct ProblemView {
  int64_t n = 0, m = 0;             // the valid block
  const T* cost = nullptr;          // row i at cost + i·ld_cost
  int64_t ld_cost = 0;
  const uint8_t* mask = nullptr;    // null: no mask; row i at mask + i·ld_mask
  int64_t ld_mask = 0;
  const T* a = nullptr;             // n weights
  const T* b = nullptr;             // m weights
  const T* f0 = nullptr;            // null: zeros
  const T* g0 = nullptr;
  T* plan = nullptr;                // row i at plan + i·ld_plan
  int64_t ld_plan = 0;
  T* f = nullptr;                   // n outputs
  T* g = nullptr;                   // m outputs
};

struct ProblemStats {
  int64_t iterations = 0;
  double marginal_error = 0;
  bool converged = false;
  std::string error;                // empty: solved; otherwise what went wrong (no throw, so it can run
                                    // inside an OpenMP loop)
};

// What is wrong with the values of one problem — weights, their sums, costs, warm starts, rows or columns that
// cannot send or receive their weight under the mask — or "" (ot/batched.cpp; solve() assumes it passed).
template <typename T> std::string check_values(const ProblemView<T>& p, double epsilon);

// threads > 1 splits the rows of this one problem over that many OpenMP threads (for large problems solved
// alone); threads == 1 runs it on the calling thread (the batched driver runs problems in parallel instead).
template <typename T> ProblemStats solve(const ProblemView<T>& p, const SinkhornOptions& options, int threads);

}  // namespace cpu
}  // namespace rematch::ot
