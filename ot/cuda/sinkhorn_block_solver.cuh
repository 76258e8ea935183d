// Internal to ot/cuda/: BlockSolver, what one thread block of sinkhorn_block.cu's kernel runs to solve its
// problem — the state in shared memory and the two schedules below; the half-steps they are made of are
// defined in sinkhorn_block_steps.cuh.
//
// A log sweep is Cuturi's (2013) pair u = a / Kv, v = b / Kᵀu in the log domain, as ot/cpu/sinkhorn.cpp's:
//   φ_i = log a_i − LSE_j(ψ_j − C_ij/ε),   then   ψ_j = log b_j − LSE_i(φ_i − C_ij/ε),
// each LSE shifted by its value of the previous log sweep (one exp per entry) and redone shifted by the exact
// maximum when that sum leaves the safe range or there is no previous value; the first column half-step takes
// exact maxima first — the CPU's schedule.
//
// Two variants, chosen by whether the kernel matrix fits in shared memory:
//   cached    the CPU solver's state machine (ot/cpu/sinkhorn.cpp run()): after a log sweep the kernel at the current
//             potentials, K̃ = exp(φ̄ ⊕ ψ̄ − C/ε) (Schmitzer 2019's absorption), is kept in shared memory and the
//             next sweeps are u = a / K̃v, v = b / K̃ᵀu — one multiply-add per entry instead of an exp, the
//             same iterates to rounding; re-absorbed when u or v leave [e^−τ, e^τ], back to a log sweep when a
//             sum leaves the safe range. The SFU bound of docs/ot.md §7.2 no longer applies to most sweeps.
//             Domain::Scaling is the CPU's too: K̃ absorbed once at the warm start, any unsafe sum an error.
//   log       every sweep a log sweep (problems whose kernel does not fit). The row LSE with the new ψ is
//             computed at the end of each sweep: it gives the row marginals exp(φ_i + LSE_i) the MarginalL1 rule
//             tests and is the next sweep's row half-step. Domain::Scaling runs the same iterates and raises the
//             scaling domain's error when a sum of its fixed kernel would leave the safe range (s_i = exp(φ̄_i +
//             LSE_i), t_j = exp(ψ̄_j + LSE_j) with φ̄, ψ̄ the starting potentials).
#pragma once

#include <cstdint>

#include "ot/cuda/sinkhorn_device.cuh"

namespace rematch::ot::cuda::detail {

template <typename T, bool kCached> class BlockSolver {
 public:
  __device__ BlockSolver(const BatchArgs<T>& p, int64_t k, unsigned char* smem, double* red, int* flags)
      : p_(p), k_(k), n_(p.rows[k]), m_(p.cols[k]), a_(p.a + k * p.a_step), b_(p.b + k * p.b_step),
        cost_(p.cost + k * p.n * p.m), mask_(p.mask ? p.mask + k * p.mask_step : nullptr), red_(red),
        flag_(flags), cached_(flags + 1) {
    // Carved for this problem's valid sizes; the launch provides room for the padded n × m.
    T* base = reinterpret_cast<T*>(smem);
    const auto take = [&](int64_t count) {
      T* at = base;
      base += count;
      return at;
    };
    phi_ = take(n_);
    rlse_ = take(n_);
    phibar_ = take(n_);
    psi_ = take(m_);
    clse_ = take(m_);
    psibar_ = take(m_);
    part_ = take(max64(blockDim.x, m_));
    if constexpr (kCached) {
      u_ = take(n_);
      u_next_ = take(n_);
      s_ = take(n_);
      phi_prev_ = take(n_);
      v_ = take(m_);
      v_next_ = take(m_);
      t_ = take(m_);
      kernel_ = take(n_ * m_);
    }
  }

  __device__ void run() {
    init();
    int64_t it = 0;
    bool converged = false;
    if constexpr (kCached) converged = run_cached(it);
    else converged = run_log(it);
    const double marginal_error = block_sum(marginal_part(), red_);
    if constexpr (kCached) {
      if (*cached_) {
        materialize();
        __syncthreads();
      }
    }
    write_outputs();
    if (threadIdx.x == 0) write_stats(p_.stats[k_], it, marginal_error, converged, *flag_);
  }

 private:
  __device__ T c(int64_t i, int64_t j) const { return scaled_cost(cost_, mask_, p_.m, i, j, p_.inv_eps); }

  // ---- the two schedules -------------------------------------------------------------------------------------

  // ot/cpu/sinkhorn.cpp Solver::run(), step for step; every branch is taken by the whole block (its conditions are
  // block reductions). Returns whether the rule was met; `it` counts the sweeps.
  __device__ bool run_cached(int64_t& it) {
    if (p_.scaling && !absorb()) return fail();
    while (it < p_.max_iter) {
      ++it;
      if (p_.potential_rule) copy(phi_prev_, phi_, n_);
      if (!(*cached_ && cached_sweep())) {
        if (p_.scaling) return fail();
        if (*cached_) materialize();
        __syncthreads();
        row_pass();
        __syncthreads();
        update_phi(false);
        __syncthreads();
        col_pass(it == 1);
        if (!absorb()) {
          row_pass();
          __syncthreads();
        }
      } else if (!p_.scaling && !scalings_in_range()) {
        materialize();
        __syncthreads();
        if (!absorb()) {
          row_pass();
          __syncthreads();
        }
      } else if (p_.potential_rule) {
        materialize();
        __syncthreads();
      }
      if (it % p_.check_every == 0 || it == p_.max_iter) {
        const double err = p_.potential_rule ? p_.epsilon * sqrt(block_sum(change_part(), red_))
                                             : block_sum(marginal_part(), red_);
        if (err < p_.tol) return true;
      }
    }
    return false;
  }

  // Log sweeps only, the row LSE with the new ψ at the end of each.
  __device__ bool run_log(int64_t& it) {
    row_pass();
    __syncthreads();
    if (p_.scaling) check_rows();
    while (it < p_.max_iter) {
      ++it;
      const bool check = it % p_.check_every == 0 || it == p_.max_iter;
      const double change = update_phi(check && p_.potential_rule);
      __syncthreads();
      col_pass(it == 1);
      row_pass();
      __syncthreads();
      if (p_.scaling) {
        check_rows();
        __syncthreads();
      }
      if (*flag_) return false;  // the host reports the scaling domain's error
      if (check) {
        const double err = p_.potential_rule ? p_.epsilon * sqrt(block_sum(change, red_))
                                             : block_sum(marginal_part(), red_);
        if (err < p_.tol) return true;
      }
    }
    return false;
  }

  // The scaling domain's error: the host reports it (DeviceStats::range_error).
  __device__ bool fail() {
    if (threadIdx.x == 0) *flag_ = 1;
    __syncthreads();
    return false;
  }

  // φ = f0/ε (or 0), ψ = g0/ε (or 0); no previous LSE (−inf: the first half-steps take exact maxima). In the
  // log variant's scaling domain the fixed kernel carries v_j = 0 on zero-weight columns from the start
  // (ot/cpu/sinkhorn.cpp absorb()), so their ψ starts at −inf there; the cached variant absorbs exactly that.
  __device__ void init() {
    const int t = threadIdx.x, nt = blockDim.x;
    for (int64_t i = t; i < n_; i += nt) {
      const T v = p_.f0 ? p_.f0[k_ * p_.f0_step + i] / p_.eps : T(0);
      phi_[i] = phibar_[i] = v;
      rlse_[i] = -inf<T>();
    }
    for (int64_t j = t; j < m_; j += nt) {
      T v = p_.g0 ? p_.g0[k_ * p_.g0_step + j] / p_.eps : T(0);
      if (!kCached && p_.scaling && !(b_[j] > T(0))) v = -inf<T>();
      psi_[j] = psibar_[j] = v;
      clse_[j] = -inf<T>();
    }
    if (t == 0) {
      *flag_ = 0;
      *cached_ = 0;
    }
    __syncthreads();
  }

  // The half-steps, defined in sinkhorn_block_steps.cuh.

  // ---- log half-steps ----------------------------------------------------------------------------------------
  __device__ void row_pass();
  __device__ void col_pass(bool exact);
  __device__ double update_phi(bool change);
  __device__ void check_rows();

  // ---- the cached kernel (ot/cpu/sinkhorn.cpp absorb(), cached_sweep(), materialize()) -----------------------
  __device__ bool absorb();
  __device__ bool cached_sweep();
  __device__ bool kernel_rows(const T* x, T* out);
  __device__ void kernel_cols(const T* y, T* out);
  __device__ void materialize();
  __device__ bool scalings_in_range();

  // ---- errors and outputs ------------------------------------------------------------------------------------
  __device__ double marginal_part() const;
  __device__ double change_part() const;
  __device__ void copy(T* to, const T* from, int64_t count);
  __device__ void write_outputs() const;

  const BatchArgs<T>& p_;
  const int64_t k_, n_, m_;
  const T* a_;
  const T* b_;
  const T* cost_;
  const uint8_t* mask_;
  double* red_;
  int* flag_;    // shared: the scaling domain's error
  int* cached_;  // shared: the state is (φ̄, ψ̄, u, v) on the kernel K̃ (cached variant)
  T *phi_, *rlse_, *phibar_, *psi_, *clse_, *psibar_, *part_;
  T *u_ = nullptr, *u_next_ = nullptr, *s_ = nullptr, *phi_prev_ = nullptr;
  T *v_ = nullptr, *v_next_ = nullptr, *t_ = nullptr, *kernel_ = nullptr;
};

}  // namespace rematch::ot::cuda::detail
