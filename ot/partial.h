// Partial optimal transport: move only `mass` s ≤ min(Σa, Σb) between a and b, at least cost, by the dummy
// row/column augmentation of Chapel et al. (NeurIPS 2020): one extra row of weight Σb − s and one extra column
// of weight Σa − s absorb the mass that is not transported, and an ordinary (balanced, entropic) Sinkhorn solves
// the (n+1)×(m+1) problem; the real n×m block is the partial plan.
//
// Dummy cost conventions (C the real cost, ξ the dummy cost, A the corner surcharge):
//   L2RM         Ĉ = [[C, ξ·1], [ξ·1ᵀ, 2ξ + A]], ξ = 100·max C, A = max C by default (L2RM supp. Eq. (3)
//                and Algorithm 2, docs/methods/l2rm.md §1.5 step 3); the mask is extended with ones.
//   L2RMShifted  Ĉ = [[C, 0], [0ᵀ, A]]: L2RM's costs minus ξ on the dummy row and column. A cost shift
//                C_ij − α_i − β_j only shifts the potentials (f − α, g − β), so with the potentials started at
//                −ξ on the dummies every sweep gives L2RM's plan, to rounding (docs/ot.md §3.2), while the
//                sweeps never subtract two numbers of size ξ/ε (10⁴·max C at ε = 0.01), which float32 cannot.
//   Zero         Ĉ = [[C, 0], [0ᵀ, 0]] (UOT-RCL Eq. (14)); the corner carries the slack ε of UOT-RCL Eq. (13),
//                so the real block holds s plus whatever mass the entropy puts in the corner.
// With L2RM's costs, moving mass through the corner costs A + C_ij > 0 more than leaving it on the dummy
// edges, so at convergence the real block carries s up to an entropic corner leak that vanishes as ε → 0
// (1e-9 in the tests). L2RM's own loose stop (‖Δu‖₂ < 1e-3) leaves ~0.107 for s = 0.1 (docs/methods/l2rm.md §1.5).
//
// The marginals are â = [a; Σb − s] and b̂ = [b; Σa − s] (L2RM writes Σa − s for both, the same when Σa = Σb).
// Costs must be finite and ≥ 0 everywhere (the construction needs C ≥ 0; ξ and A come from max C over the
// whole real block, masked entries included, as L2RM takes C.max() before masking). Warm starts are refused.
#pragma once

#include <limits>
#include <vector>

#include "ot/batched.h"
#include "ot/sinkhorn.h"

namespace rematch::ot {

enum class DummyCost { L2RM, L2RMShifted, Zero };

struct DummyOptions {
  DummyCost costs = DummyCost::L2RM;
  double xi = std::numeric_limits<double>::quiet_NaN();      // ξ (L2RM forms); NaN: 100·max C per problem
  double corner = std::numeric_limits<double>::quiet_NaN();  // A; NaN: max C (L2RM forms) or 0 (Zero)
};

// C [n, m], a [n], b [m] (undefined: uniform), 0 < mass ≤ min(Σa, Σb); a mass above min(Σa, Σb) by at most
// 1e-6 relative (1e-5 for float32: rounding, as in the balanced solver's Σa = Σb check) is taken as min(Σa, Σb).
// options.mask [n, m] (optional).
// Result: plan = the real block [n, m] (detached); f [n+1] and g [m+1] are the potentials of the augmented
// problem in the convention solved (L2RMShifted: L2RM's minus ξ on the dummy entries); iterations, the
// marginal error and convergence refer to the augmented problem (the stopping rule sees the dummy too, as in
// L2RM's `sinkhorn_log_domain`).
SinkhornResult partial_sinkhorn(const Tensor& C, const Tensor& a, const Tensor& b, double mass,
                                const SinkhornOptions& options, const DummyOptions& dummy = {});

// C [B, n, m]; a, b, options.mask as in sinkhorn_batched (no ProblemSizes: give padding rows and columns
// weight 0); `mass` holds one value for every problem or one per problem. plan [B, n, m], f [B, n+1],
// g [B, m+1].
BatchedSinkhornResult partial_sinkhorn_batched(const Tensor& C, const Tensor& a, const Tensor& b,
                                               const std::vector<double>& mass, const SinkhornOptions& options,
                                               const DummyOptions& dummy = {});

const char* dummy_cost_name(DummyCost costs);

}  // namespace rematch::ot
