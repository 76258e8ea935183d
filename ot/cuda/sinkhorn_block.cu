// The batched Sinkhorn kernel: thread block k solves problem k, every sweep in one launch (SPEC-methods §5:
// "batch many 129×129 problems per launch"). The potentials φ = f/ε, ψ = g/ε, the last log-sum-exps and the
// column partials live in shared memory; C is read from L2/HBM (a batch of 129×129 problems in flight fits in
// L2). Each problem stops on its own: the convergence test is a block reduction, and the block leaves the loop
// when its rule is met.
//
// A log sweep is Cuturi's (2013) pair u = a / Kv, v = b / Kᵀu in the log domain, as ot/sinkhorn.cpp's:
//   φ_i = log a_i − LSE_j(ψ_j − C_ij/ε),   then   ψ_j = log b_j − LSE_i(φ_i − C_ij/ε),
// each LSE shifted by its value of the previous log sweep (one exp per entry) and redone shifted by the exact
// maximum when that sum leaves the safe range or there is no previous value; the first column half-step takes
// exact maxima first — the CPU's schedule.
//
// Two variants, chosen by whether the kernel matrix fits in shared memory:
//   cached    the CPU solver's state machine (ot/sinkhorn.cpp run()): after a log sweep the kernel at the current
//             potentials, K̃ = exp(φ̄ ⊕ ψ̄ − C/ε) (Schmitzer 2019's absorption), is kept in shared memory and the
//             next sweeps are u = a / K̃v, v = b / K̃ᵀu — one multiply-add per entry instead of an exp, the
//             same iterates to rounding; re-absorbed when u or v leave [e^−τ, e^τ], back to a log sweep when a
//             sum leaves the safe range. The SFU bound of ANCHORS.md §3a no longer applies to most sweeps.
//             Domain::Scaling is the CPU's too: K̃ absorbed once at the warm start, any unsafe sum an error.
//   log       every sweep a log sweep (problems whose kernel does not fit). The row LSE with the new ψ is
//             computed at the end of each sweep: it gives the row marginals exp(φ_i + LSE_i) the MarginalL1 rule
//             tests and is the next sweep's row half-step. Domain::Scaling runs the same iterates and raises the
//             scaling domain's error when a sum of its fixed kernel would leave the safe range (s_i = exp(φ̄_i +
//             LSE_i), t_j = exp(ψ̄_j + LSE_j) with φ̄, ψ̄ the starting potentials).
#include <algorithm>

#include "ot/cuda/sinkhorn_device.cuh"
#include "tensor/cuda/check.h"

namespace rematch::ot::cuda::detail {
namespace {

// Blocks of at most 512 threads, two per SM: 64 registers a thread, with which the float32 kernels spill at
// most 16 bytes (ptxas -v).
constexpr int kMaxThreads = 512;

// Scalings of a cached kernel stay in [e^−τ, e^τ] (ot/sinkhorn.cpp kTau).
template <typename T> constexpr double kTau = sizeof(T) == 4 ? 15.0 : 100.0;

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
    if (threadIdx.x == 0) {
      DeviceStats& st = p_.stats[k_];
      st.iterations = it;
      st.marginal_error = marginal_error;
      st.converged = converged;
      st.range_error = *flag_;
    }
  }

 private:
  __device__ T c(int64_t i, int64_t j) const { return scaled_cost(cost_, mask_, p_.m, i, j, p_.inv_eps); }

  // ---- the two schedules -------------------------------------------------------------------------------------

  // ot/sinkhorn.cpp Solver::run(), step for step; every branch is taken by the whole block (its conditions are
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
  // (ot/sinkhorn.cpp absorb()), so their ψ starts at −inf there; the cached variant absorbs exactly that.
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

  // ---- log half-steps ----------------------------------------------------------------------------------------

  // rlse_i = LSE_j(ψ_j − C_ij/ε) for every row of positive weight: `lanes` lanes per row, rows in rounds that
  // keep every lane of a warp in the shuffles. Shifted by the previous rlse_i when that sum is safe, else
  // recomputed shifted by the row maximum (ot/sinkhorn.cpp row_lse()).
  __device__ void row_pass() {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int lanes = lanes_for(m_, 4), per_warp = 32 / lanes, l = lane % lanes;
    for (int64_t base = int64_t(warp) * per_warp; base < n_; base += int64_t(warps) * per_warp) {
      const int64_t i = base + lane / lanes;
      const bool live = i < n_ && a_[i] > T(0);
      T shift = live ? rlse_[i] : T(0);
      const bool shifted = live && isfinite(shift);
      T s = 0;
      if (shifted)
        for (int64_t j = l; j < m_; j += lanes) s += exp_dev(psi_[j] - c(i, j) - shift);
      s = group_sum(s, lanes);
      const bool redo = live && !(shifted && sum_ok(s));
      if (__any_sync(kFullMask, redo)) {
        T mx = -inf<T>();
        if (redo)
          for (int64_t j = l; j < m_; j += lanes) mx = fmax(mx, psi_[j] - c(i, j));
        mx = group_max(mx, lanes);
        T s2 = 0;
        if (redo && mx != -inf<T>())
          for (int64_t j = l; j < m_; j += lanes) s2 += exp_dev(psi_[j] - c(i, j) - mx);
        s2 = group_sum(s2, lanes);
        if (redo) {
          shift = mx;
          s = mx == -inf<T>() ? T(1) : s2;
        }
      }
      if (live && l == 0) rlse_[i] = shift + log_dev(s);
    }
  }

  // ψ_j = log b_j − LSE_i(φ_i − C_ij/ε). Thread u of G·m works on column u mod m over the rows ≡ u / m
  // (mod G), G = max(1, threads / m), and the G partial sums are added in order. `exact` (the first sweep)
  // first takes the column maxima as shifts; otherwise the previous LSE is the shift and a column whose sum is
  // out of range is redone down the column by one thread (ot/sinkhorn.cpp col_lse()). Ends synchronised.
  __device__ void col_pass(bool exact) {
    const int t = threadIdx.x, nt = blockDim.x;
    const int64_t groups = max64(1, nt / m_), units = groups * m_;
    if (exact) {
      for (int64_t u = t; u < units; u += nt) {
        const int64_t g = u / m_, j = u - g * m_;
        T mx = -inf<T>();
        for (int64_t i = g; i < n_; i += groups) mx = fmax(mx, phi_[i] - c(i, j));
        part_[u] = mx;
      }
      __syncthreads();
      for (int64_t j = t; j < m_; j += nt) {
        T mx = part_[j];
        for (int64_t g = 1; g < groups; ++g) mx = fmax(mx, part_[g * m_ + j]);
        clse_[j] = mx;
      }
      __syncthreads();
    }
    for (int64_t u = t; u < units; u += nt) {
      const int64_t g = u / m_, j = u - g * m_;
      const T shift = clse_[j];
      T s = 0;
      if (isfinite(shift))
        for (int64_t i = g; i < n_; i += groups)
          if (phi_[i] != -inf<T>()) s += exp_dev(phi_[i] - c(i, j) - shift);
      part_[u] = s;
    }
    __syncthreads();
    for (int64_t j = t; j < m_; j += nt) {
      const T bj = b_[j];
      if (!(bj > T(0))) {
        psi_[j] = -inf<T>();
        continue;
      }
      T s = part_[j];
      for (int64_t g = 1; g < groups; ++g) s += part_[g * m_ + j];
      T shift = clse_[j];
      if (!(isfinite(shift) && sum_ok(s))) {
        shift = -inf<T>();
        for (int64_t i = 0; i < n_; ++i) shift = fmax(shift, phi_[i] - c(i, j));
        s = T(1);
        if (shift != -inf<T>()) {
          s = T(0);
          for (int64_t i = 0; i < n_; ++i) s += exp_dev(phi_[i] - c(i, j) - shift);
        }
      }
      clse_[j] = shift + log_dev(s);
      psi_[j] = log_dev(bj) - clse_[j];
      // Log variant, scaling domain: t_j = Σ_i K̃_ij u_i = exp(ψ̄_j + clse_j) must stay in range.
      if (!kCached && p_.scaling && !log_sum_ok<T>(double(psibar_[j]) + double(clse_[j]))) *flag_ = 1;
    }
    __syncthreads();
  }

  // φ_i = log a_i − rlse_i (−inf for zero weight). Returns this thread's part of ‖φ − φ_prev‖₂² over the rows
  // of positive weight when `change` (the PotentialChange rule, L2RM's ‖u − u_prev‖₂ in units of ε).
  __device__ double update_phi(bool change) {
    double d2 = 0;
    for (int64_t i = threadIdx.x; i < n_; i += blockDim.x) {
      const T ai = a_[i];
      const T next = ai > T(0) ? log_dev(ai) - rlse_[i] : -inf<T>();
      if (change && ai > T(0)) {
        const double d = double(next) - double(phi_[i]);
        d2 += d * d;
      }
      phi_[i] = next;
    }
    return d2;
  }

  // Log variant, scaling domain: s_i = Σ_j K̃_ij v_j = exp(φ̄_i + rlse_i) must stay in range.
  __device__ void check_rows() {
    for (int64_t i = threadIdx.x; i < n_; i += blockDim.x)
      if (a_[i] > T(0) && !log_sum_ok<T>(double(phibar_[i]) + double(rlse_[i]))) *flag_ = 1;
  }

  // ---- the cached kernel (ot/sinkhorn.cpp absorb(), cached_sweep(), materialize()) ---------------------------

  // K̃ = exp(φ ⊕ ψ − C/ε) at the current potentials (the current plan), φ̄ = φ, ψ̄ = ψ, u = v = 1 (0 for zero
  // weights), s = K̃v. False (and the state left in the log domain) when a row sum of K̃ is unsafe.
  __device__ bool absorb() {
    const int t = threadIdx.x, nt = blockDim.x;
    for (int64_t i = t; i < n_; i += nt) {
      phibar_[i] = phi_[i];
      u_[i] = a_[i] > T(0) ? T(1) : T(0);
    }
    for (int64_t j = t; j < m_; j += nt) {
      psibar_[j] = psi_[j];
      v_[j] = b_[j] > T(0) ? T(1) : T(0);
    }
    const int lane = t & 31, warp = t >> 5, warps = nt >> 5;
    for (int64_t i = warp; i < n_; i += warps) {
      const T fi = phi_[i];
      for (int64_t j = lane; j < m_; j += 32) kernel_[i * m_ + j] = exp_dev(fi + psi_[j] - c(i, j));
    }
    __syncthreads();
    const bool ok = kernel_rows(v_, s_);
    if (threadIdx.x == 0) *cached_ = ok;
    __syncthreads();
    return ok;
  }

  // u = a / K̃v, v = b / K̃ᵀu, and the next K̃v into s. Commits u and v only when every sum it divides by is
  // safe (s is recomputed by whatever follows a failure).
  __device__ bool cached_sweep() {
    const int t = threadIdx.x, nt = blockDim.x;
    for (int64_t i = t; i < n_; i += nt) u_next_[i] = a_[i] > T(0) ? a_[i] / s_[i] : T(0);
    __syncthreads();
    kernel_cols(u_next_, t_);
    bool ok = true;
    for (int64_t j = t; j < m_; j += nt) {
      const T bj = b_[j];
      ok &= !(bj > T(0)) || sum_ok(t_[j]);
      v_next_[j] = bj > T(0) ? bj / t_[j] : T(0);
    }
    if (!__syncthreads_and(ok)) return false;
    if (!kernel_rows(v_next_, s_)) return false;
    T* swap = u_;
    u_ = u_next_;
    u_next_ = swap;
    swap = v_;
    v_ = v_next_;
    v_next_ = swap;
    return true;
  }

  // out_i = Σ_j K̃_ij x_j, a group of lanes per row; true when every row of positive weight has a safe sum.
  // Ends synchronised.
  __device__ bool kernel_rows(const T* x, T* out) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int lanes = lanes_for(m_, 4), per_warp = 32 / lanes, l = lane % lanes;
    bool ok = true;
    for (int64_t base = int64_t(warp) * per_warp; base < n_; base += int64_t(warps) * per_warp) {
      const int64_t i = base + lane / lanes;
      T s = 0;
      if (i < n_)
        for (int64_t j = l; j < m_; j += lanes) s += kernel_[i * m_ + j] * x[j];
      s = group_sum(s, lanes);
      if (i < n_ && l == 0) {
        out[i] = s;
        ok &= !(a_[i] > T(0)) || sum_ok(s);
      }
    }
    return __syncthreads_and(ok);
  }

  // out_j = Σ_i K̃_ij y_i, the column units of col_pass(). Ends synchronised.
  __device__ void kernel_cols(const T* y, T* out) {
    const int t = threadIdx.x, nt = blockDim.x;
    const int64_t groups = max64(1, nt / m_), units = groups * m_;
    for (int64_t u = t; u < units; u += nt) {
      const int64_t g = u / m_, j = u - g * m_;
      T s = 0;
      for (int64_t i = g; i < n_; i += groups) s += kernel_[i * m_ + j] * y[i];
      part_[u] = s;
    }
    __syncthreads();
    for (int64_t j = t; j < m_; j += nt) {
      T s = part_[j];
      for (int64_t g = 1; g < groups; ++g) s += part_[g * m_ + j];
      out[j] = s;
    }
    __syncthreads();
  }

  // φ = φ̄ + log u, ψ = ψ̄ + log v (−inf for zero scalings).
  __device__ void materialize() {
    for (int64_t i = threadIdx.x; i < n_; i += blockDim.x)
      phi_[i] = u_[i] > T(0) ? phibar_[i] + log_dev(u_[i]) : -inf<T>();
    for (int64_t j = threadIdx.x; j < m_; j += blockDim.x)
      psi_[j] = v_[j] > T(0) ? psibar_[j] + log_dev(v_[j]) : -inf<T>();
  }

  __device__ bool scalings_in_range() {
    const double lo = exp(-kTau<T>), hi = exp(kTau<T>);
    bool ok = true;
    for (int64_t i = threadIdx.x; i < n_; i += blockDim.x)
      ok &= !(a_[i] > T(0)) || (double(u_[i]) >= lo && double(u_[i]) <= hi);
    for (int64_t j = threadIdx.x; j < m_; j += blockDim.x)
      ok &= !(b_[j] > T(0)) || (double(v_[j]) >= lo && double(v_[j]) <= hi);
    return __syncthreads_and(ok);
  }

  // ---- errors and outputs ------------------------------------------------------------------------------------

  // This thread's part of Σ_i |(P·1)_i − a_i|: u_i·(K̃v)_i on a cached kernel, exp(φ_i + rlse_i) otherwise
  // (the columns are exact after a sweep).
  __device__ double marginal_part() const {
    const bool cached = kCached && *cached_;
    double e = 0;
    for (int64_t i = threadIdx.x; i < n_; i += blockDim.x) {
      const T ai = a_[i];
      if (!(ai > T(0))) continue;
      const double row = cached ? double(u_[i]) * double(s_[i]) : exp(double(phi_[i]) + double(rlse_[i]));
      e += fabs(row - double(ai));
    }
    return e;
  }

  // This thread's part of ‖φ − φ_prev‖₂² over the rows of positive weight (cached variant).
  __device__ double change_part() const {
    double d2 = 0;
    for (int64_t i = threadIdx.x; i < n_; i += blockDim.x) {
      if (!(a_[i] > T(0))) continue;
      const double d = double(phi_[i]) - double(phi_prev_[i]);
      d2 += d * d;
    }
    return d2;
  }

  __device__ void copy(T* to, const T* from, int64_t count) {
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) to[i] = from[i];
    __syncthreads();
  }

  // P_ij = exp(φ_i + ψ_j − C_ij/ε) (exactly 0 where masked), f = φ·ε, g = ψ·ε. Outside the valid block the
  // host has zeroed the outputs.
  __device__ void write_outputs() const {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    T* plan = p_.plan + k_ * p_.n * p_.m;
    for (int64_t i = warp; i < n_; i += warps) {
      const T fi = phi_[i];
      for (int64_t j = lane; j < m_; j += 32) plan[i * p_.m + j] = exp_dev(fi + psi_[j] - c(i, j));
    }
    for (int64_t i = threadIdx.x; i < n_; i += blockDim.x) p_.f[k_ * p_.n + i] = phi_[i] * p_.eps;
    for (int64_t j = threadIdx.x; j < m_; j += blockDim.x) p_.g[k_ * p_.m + j] = psi_[j] * p_.eps;
  }

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

template <typename T, bool kCached>
__global__ void __launch_bounds__(kMaxThreads, 2) block_kernel(const __grid_constant__ BatchArgs<T> p) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ double red[33];
  __shared__ int flags[2];
  const int64_t k = blockIdx.x;
  if (p.invalid[k]) return;
  BlockSolver<T, kCached>(p, k, smem, red, flags).run();
}

template <typename T> size_t block_smem(int64_t n, int64_t m, int threads, bool cached) {
  const int64_t values = 3 * n + 3 * m + std::max<int64_t>(threads, m) + (cached ? n * m + 4 * n + 3 * m : 0);
  return static_cast<size_t>(values) * sizeof(T);
}

template <typename T> auto block_kernel_for(bool cached) {
  return cached ? block_kernel<T, true> : block_kernel<T, false>;
}

// Blocks of `threads` that fit on one SM with `smem` bytes of dynamic shared memory each (0: none, also when
// smem and the kernel's static shared memory exceed what one block may have).
template <typename T> int blocks_per_sm(bool cached, int threads, size_t smem, const DeviceInfo& info) {
  const auto kernel = block_kernel_for<T>(cached);
  cudaFuncAttributes attributes;
  REMATCH_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (smem + attributes.sharedSizeBytes > info.smem_optin) return 0;
  REMATCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int blocks = 0;
  REMATCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem));
  return blocks;
}

}  // namespace

// Cached when K̃ fits (BlockConfig::resident). Threads: with no more problems than SMs every problem has an SM
// to itself, so the larger block; otherwise the size that keeps the most threads resident per SM (ties: more
// blocks, whose barriers then overlap).
template <typename T>
BlockConfig block_config(int64_t batch, int64_t n, int64_t m, bool allow_resident, const DeviceInfo& info) {
  BlockConfig best;
  for (const bool cached : {true, false}) {
    if (cached && !allow_resident) continue;
    for (const int threads : {kMaxThreads / 2, kMaxThreads}) {
      const size_t smem = block_smem<T>(n, m, threads, cached);
      const int per_sm = blocks_per_sm<T>(cached, threads, smem, info);
      if (per_sm == 0) continue;
      const int64_t resident_threads = static_cast<int64_t>(per_sm) * threads;
      const int64_t best_threads = static_cast<int64_t>(best.blocks_per_sm) * best.threads;
      const bool better = batch <= info.sms
                              ? threads > best.threads
                              : (resident_threads > best_threads ||
                                 (resident_threads == best_threads && per_sm > best.blocks_per_sm));
      if (!best.feasible || better) best = BlockConfig{true, cached, threads, smem, per_sm};
    }
    if (best.feasible) break;  // a cached configuration beats any log-only one
  }
  return best;
}

template <typename T> void launch_block(const BatchArgs<T>& p, const BlockConfig& config, cudaStream_t stream) {
  const auto kernel = block_kernel_for<T>(config.resident);
  REMATCH_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(config.smem)));
  kernel<<<static_cast<unsigned>(p.batch), config.threads, config.smem, stream>>>(p);
  REMATCH_CUDA_LAUNCH_CHECK("sinkhorn_block_kernel");
}

template BlockConfig block_config<float>(int64_t, int64_t, int64_t, bool, const DeviceInfo&);
template BlockConfig block_config<double>(int64_t, int64_t, int64_t, bool, const DeviceInfo&);
template void launch_block<float>(const BatchArgs<float>&, const BlockConfig&, cudaStream_t);
template void launch_block<double>(const BatchArgs<double>&, const BlockConfig&, cudaStream_t);

}  // namespace rematch::ot::cuda::detail
