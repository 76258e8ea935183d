// Internal to ot/cuda/: what every Sinkhorn kernel reads and writes, and the launchers the host driver
// (sinkhorn.cu) calls — value checks (sinkhorn_validate.cu), the block-per-problem solver (sinkhorn_block.cu)
// and the whole-device solver (sinkhorn_grid.cu). Plain structs of device pointers, passed to kernels by value.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace rematch::ot::cuda::detail {

// Per problem, written by the solver kernels.
struct DeviceStats {
  int64_t iterations;
  double marginal_error;
  int32_t converged;
  int32_t range_error;  // scaling domain: a sum of the fixed kernel left the safe range (the CPU's error)
};

template <typename T> struct BatchArgs {
  int64_t batch, n, m;                // padded sizes: C, mask, plan [batch, n, m]; f [batch, n]; g [batch, m]
  const int64_t* rows;                // device, batch entries: problem k uses the top-left rows[k] × cols[k]
  const int64_t* cols;
  const T* cost;
  const uint8_t* mask;                // null: no mask; a nonzero byte lets the entry carry mass
  int64_t mask_step;                  // 0 (one mask for all) or n·m
  const T* a;                         // a + k·a_step: problem k's row weights (step 0: shared)
  int64_t a_step;
  const T* b;
  int64_t b_step;
  const T* f0;                        // null: zeros
  int64_t f0_step;
  const T* g0;
  int64_t g0_step;
  double epsilon;                     // ε as given (the PotentialChange rule is ε·‖Δφ‖₂ in double, as on the CPU)
  T eps;                              // T(ε): f = φ·ε, φ0 = f0/ε
  T inv_eps;                          // T(1/ε): C/ε is evaluated as C·(1/ε), see sinkhorn_device.cuh
  int64_t max_iter, check_every;
  double tol;
  bool potential_rule;                // StopRule::PotentialChange (else MarginalL1)
  bool scaling;                       // Domain::Scaling: the log-domain sweeps plus the scaling domain's range test
  const int32_t* invalid;             // per problem: nonzero = failed the value checks, not solved
  T* plan;
  T* f;
  T* g;
  DeviceStats* stats;
};

// What the host needs to know about the device to size launches.
struct DeviceInfo {
  int sms = 0;                // streaming multiprocessors
  size_t smem_optin = 0;      // dynamic shared memory one block may opt in to
};

// ---- value checks (sinkhorn_validate.cu) ----------------------------------------------------------------------
// invalid[k] = 1 when problem k would fail cpu::check_values (ot/batched.cpp), else 0 — decided with the same
// comparisons (the marginal sums, when too close to the tolerance to be sure in another summation order, are
// redone in the CPU's order). row_reach [batch·n] and col_reach [batch·m] are zeroed scratch, used only with a
// mask (without one, every row reaches every column). Three launches, no synchronisation.
template <typename T>
void launch_validate(const BatchArgs<T>& p, int32_t* invalid, uint8_t* row_reach, uint8_t* col_reach,
                     cudaStream_t stream);

// ---- one block per problem (sinkhorn_block.cu) ----------------------------------------------------------------
struct BlockConfig {
  bool feasible = false;      // the potentials fit in shared memory
  bool resident = false;      // the cached kernel K̃ fits in shared memory too (the absorbing variant)
  int threads = 0;
  size_t smem = 0;
  int blocks_per_sm = 0;
};
// The launch for `batch` problems of at most n × m. allow_resident false: log sweeps only, even when K̃ would fit.
template <typename T>
BlockConfig block_config(int64_t batch, int64_t n, int64_t m, bool allow_resident, const DeviceInfo& info);
template <typename T> void launch_block(const BatchArgs<T>& p, const BlockConfig& config, cudaStream_t stream);

// ---- one problem over the whole device (sinkhorn_grid.cu) -----------------------------------------------------
struct GridConfig {
  bool resident = false;      // each block keeps its row slab of C/ε in shared memory
  int threads = 0;
  int blocks = 0;             // co-resident (cooperative launch)
  size_t smem = 0;
  int64_t chunk = 0;          // columns of the potential ψ staged in shared memory at a time
};
template <typename T> GridConfig grid_config(int64_t n, int64_t m, bool allow_resident, const DeviceInfo& info);

// Device scratch of one grid solve, reused problem after problem (the launches are stream-ordered).
template <typename T> struct GridScratch {
  T* phi;                     // [n] row potentials f/ε
  T* rlse;                    // [n] row log-sum-exps of the last row half-step
  T* phibar;                  // [n] initial φ (scaling domain's fixed kernel)
  T* psi;                     // [m] column potentials g/ε
  T* psibar;                  // [m] initial ψ
  T* part_mx;                 // [blocks, m] per-block column partials (max, shifted sum)
  T* part_s;
  double* block_sums;         // [2·blocks] per-block error partials: convergence tests, then the final error
  int* flag;                  // scaling domain: some sum left the safe range
};
template <typename T>
void launch_grid(const BatchArgs<T>& p, const GridScratch<T>& scratch, int64_t problem, const GridConfig& config,
                 cudaStream_t stream);

}  // namespace rematch::ot::cuda::detail
