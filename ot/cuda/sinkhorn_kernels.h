// The CUDA backend of the Sinkhorn driver (ot/batched.cpp calls solve() for a cost on a CUDA device). Same
// contract as the CPU backend (ot/sinkhorn.h): the same sweeps (row half-step, then column half-step, Cuturi
// 2013 in the log domain), the same stopping rules tested after every check_every-th sweep, the same results
// (plan, f, g, iterations, marginal error, converged) and the same error messages, computed on the device; the
// host waits only to hand over the valid sizes and to read the per-problem results back, never between sweeps.
//
// Two kernel families, both running every sweep of a solve inside one launch:
//   Block  one thread block per problem (a batch of B problems is one launch of B blocks), the potentials in
//          shared memory (problems up to a few thousand rows plus columns). When the kernel matrix fits there
//          too (129×129 float32 is 65 KB: two or three problems per SM) it follows the CPU's absorption scheme —
//          most sweeps are two matrix-vector products on the cached K̃ = exp(φ̄ ⊕ ψ̄ − C/ε), not exps; otherwise
//          every sweep is a log sweep over C read from L2/HBM.
//   Grid   one problem over the whole device, a persistent cooperative kernel: rows are split over the blocks,
//          the column log-sum-exp merges per-block partials after a grid-wide barrier, the convergence test is
//          a grid-wide sum. Any size: tall N×K (UOT-RCL's label correction, N up to 1e6) and square N×N (up to
//          32,768 and beyond); the row slab of C/ε stays in shared memory when the slabs fit (32000×201
//          float32 does), otherwise each sweep streams C twice, the floor for alternating sweeps.
// Kernel::Auto picks per batch by a cost model (ot/cuda/sinkhorn.cu); tests and benchmarks may force one.
#pragma once

#include <cstdint>
#include <vector>

#include "ot/batched.h"
#include "ot/sinkhorn.h"

namespace rematch::ot::cuda {

enum class Kernel { Auto, Block, Grid };

struct Tuning {
  Kernel kernel = Kernel::Auto;
  // Keep the problem's matrix in shared memory when it fits (the block kernel's K̃, the grid kernel's slabs of
  // C/ε); false: never (tests cover both variants of each family).
  bool resident = true;
};
// Process-wide; set before solving (not synchronised with solves running on other threads).
void set_tuning(const Tuning& tuning);
Tuning tuning();

// The safe range of a shifted log-sum-exp sum, as on the CPU (ot/cpu/sinkhorn_kernels.h kSumLo/kSumHi;
// ot/batched.cpp asserts they agree): outside it the sum is redone shifted by the exact maximum, and the
// scaling domain's fixed kernel counts as under- or overflowed.
template <typename T> constexpr double kSumLo = sizeof(T) == 4 ? 1e-25 : 1e-250;
template <typename T> constexpr double kSumHi = sizeof(T) == 4 ? 1e25 : 1e250;

// Solves a batch on C's CUDA device. Inputs as the driver hands them over: shape-, dtype- and device-checked,
// contiguous; C [B, n, m] float32/float64; a [n] or [B, n] and b [m] or [B, m] (defined: the driver makes
// uniform weights); mask undefined, [n, m] or [B, n, m] bool/uint8; f0, g0 undefined, [n]/[m] or [B, n]/[B, m];
// rows/cols the valid sizes (empty: full). out.plan [B, n, m], out.f [B, n], out.g [B, m] are allocated on the
// device by the caller and are written entirely (zeros outside each valid block). Returns one ProblemStats per
// problem; a problem whose values fail cpu::check_values, or whose scaling-domain kernel leaves the safe range,
// carries the CPU's error message instead.
std::vector<cpu::ProblemStats> solve(const Tensor& C, const Tensor& a, const Tensor& b, const Tensor& mask,
                                     const Tensor& f0, const Tensor& g0, const SinkhornOptions& options,
                                     const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
                                     BatchedSinkhornResult& out);

}  // namespace rematch::ot::cuda
