// Internal to ot/cuda/: the half-steps of BlockSolver (sinkhorn_block_solver.cuh), the per-block solver of
// sinkhorn_block.cu's kernel — the log-domain row and column passes, the cached kernel's sweeps, the
// convergence errors and the outputs. Every function is called by the whole block.
#pragma once

#include <cstdint>

#include "ot/cuda/sinkhorn_block_solver.cuh"
#include "ot/cuda/sinkhorn_device.cuh"

namespace rematch::ot::cuda::detail {

// Scalings of a cached kernel stay in [e^−τ, e^τ] (ot/cpu/sinkhorn.cpp kTau).
template <typename T> constexpr double kTau = sizeof(T) == 4 ? 15.0 : 100.0;

// ---- log half-steps -------------------------------------------------------------------------------------------

// rlse_i = LSE_j(ψ_j − C_ij/ε) for every row of positive weight: `lanes` lanes per row, rows in rounds that
// keep every lane of a warp in the shuffles. Shifted by the previous rlse_i when that sum is safe, else
// recomputed shifted by the row maximum (ot/cpu/sinkhorn.cpp row_lse()).
template <typename T, bool kCached>
__device__ void BlockSolver<T, kCached>::row_pass() {
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
// out of range is redone down the column by one thread (ot/cpu/sinkhorn.cpp col_lse()). Ends synchronised.
template <typename T, bool kCached>
__device__ void BlockSolver<T, kCached>::col_pass(bool exact) {
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
template <typename T, bool kCached>
__device__ double BlockSolver<T, kCached>::update_phi(bool change) {
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
template <typename T, bool kCached>
__device__ void BlockSolver<T, kCached>::check_rows() {
  for (int64_t i = threadIdx.x; i < n_; i += blockDim.x)
    if (a_[i] > T(0) && !log_sum_ok<T>(double(phibar_[i]) + double(rlse_[i]))) *flag_ = 1;
}

// ---- the cached kernel (ot/cpu/sinkhorn.cpp absorb(), cached_sweep(), materialize()) --------------------------

// K̃ = exp(φ ⊕ ψ − C/ε) at the current potentials (the current plan), φ̄ = φ, ψ̄ = ψ, u = v = 1 (0 for zero
// weights), s = K̃v. False (and the state left in the log domain) when a row sum of K̃ is unsafe.
template <typename T, bool kCached>
__device__ bool BlockSolver<T, kCached>::absorb() {
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
template <typename T, bool kCached>
__device__ bool BlockSolver<T, kCached>::cached_sweep() {
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
template <typename T, bool kCached>
__device__ bool BlockSolver<T, kCached>::kernel_rows(const T* x, T* out) {
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
template <typename T, bool kCached>
__device__ void BlockSolver<T, kCached>::kernel_cols(const T* y, T* out) {
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
template <typename T, bool kCached>
__device__ void BlockSolver<T, kCached>::materialize() {
  for (int64_t i = threadIdx.x; i < n_; i += blockDim.x)
    phi_[i] = u_[i] > T(0) ? phibar_[i] + log_dev(u_[i]) : -inf<T>();
  for (int64_t j = threadIdx.x; j < m_; j += blockDim.x)
    psi_[j] = v_[j] > T(0) ? psibar_[j] + log_dev(v_[j]) : -inf<T>();
}

template <typename T, bool kCached>
__device__ bool BlockSolver<T, kCached>::scalings_in_range() {
  const double lo = exp(-kTau<T>), hi = exp(kTau<T>);
  bool ok = true;
  for (int64_t i = threadIdx.x; i < n_; i += blockDim.x)
    ok &= !(a_[i] > T(0)) || (double(u_[i]) >= lo && double(u_[i]) <= hi);
  for (int64_t j = threadIdx.x; j < m_; j += blockDim.x)
    ok &= !(b_[j] > T(0)) || (double(v_[j]) >= lo && double(v_[j]) <= hi);
  return __syncthreads_and(ok);
}

// ---- errors and outputs ---------------------------------------------------------------------------------------

// This thread's part of Σ_i |(P·1)_i − a_i|: u_i·(K̃v)_i on a cached kernel, exp(φ_i + rlse_i) otherwise
// (the columns are exact after a sweep).
template <typename T, bool kCached>
__device__ double BlockSolver<T, kCached>::marginal_part() const {
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
template <typename T, bool kCached>
__device__ double BlockSolver<T, kCached>::change_part() const {
  double d2 = 0;
  for (int64_t i = threadIdx.x; i < n_; i += blockDim.x) {
    if (!(a_[i] > T(0))) continue;
    const double d = double(phi_[i]) - double(phi_prev_[i]);
    d2 += d * d;
  }
  return d2;
}

template <typename T, bool kCached>
__device__ void BlockSolver<T, kCached>::copy(T* to, const T* from, int64_t count) {
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) to[i] = from[i];
  __syncthreads();
}

// P_ij = exp(φ_i + ψ_j − C_ij/ε) (exactly 0 where masked), f = φ·ε, g = ψ·ε. Outside the valid block the
// host has zeroed the outputs.
template <typename T, bool kCached>
__device__ void BlockSolver<T, kCached>::write_outputs() const {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  T* plan = p_.plan + k_ * p_.n * p_.m;
  for (int64_t i = warp; i < n_; i += warps) {
    const T fi = phi_[i];
    for (int64_t j = lane; j < m_; j += 32) plan[i * p_.m + j] = exp_dev(fi + psi_[j] - c(i, j));
  }
  for (int64_t i = threadIdx.x; i < n_; i += blockDim.x) p_.f[k_ * p_.n + i] = phi_[i] * p_.eps;
  for (int64_t j = threadIdx.x; j < m_; j += blockDim.x) p_.g[k_ * p_.m + j] = psi_[j] * p_.eps;
}

}  // namespace rematch::ot::cuda::detail
