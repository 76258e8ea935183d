// The CPU Sinkhorn solver for one problem (float32 and float64): cpu::solve of ot/sinkhorn.h, which the driver
// (ot/batched.cpp) calls for host tensors; ot/cuda/sinkhorn*.cu is its CUDA twin.
//
// Layout: C is copied once, scaled and masked, into cs = C/ε (+inf where masked), so a masked entry is
// exp(−inf) = 0 exactly. Every loop walks memory row by row and vectorises (`omp simd`); column sums use
// per-thread accumulators, so there is no transposed copy. Sums are accumulated in double for both dtypes.
//
// Log domain (Domain::Log). The state is the log-potentials φ = f/ε, ψ = g/ε. A "log sweep" evaluates
//   φ_i = log a_i − LSE_j(ψ_j − cs_ij),  ψ_j = log b_j − LSE_i(φ_i − cs_ij),
// each LSE shifted by its value of the previous sweep (one pass) or, when that shifted sum leaves a safe
// range, by the exact max (two passes). After a log sweep the kernel is cached at the current potentials
// (the "absorption" of Schmitzer 2019, SIAM J. Sci. Comput. 41(3)): K̃_ij = exp(φ̄_i + ψ̄_j − cs_ij) — the
// current plan, so no entry exceeds the largest weight — and the next sweeps run u = a / (K̃v),
// v = b / (K̃ᵀu) with φ = φ̄ + log u, ψ = ψ̄ + log v: the same iterates, two matrix–vector products per sweep
// instead of 2·n·m exps. When u or v leave [e^−τ, e^τ] the kernel is re-cached; when a sum of a cached sweep
// leaves the safe range the sweep is redone as a log sweep. An entry of K̃ that underflows stands for plan
// mass below e^(−708 + 2τ) = e^−508 (float32: e^(−87 + 30) = e^−57): never visible in the marginals.
// Scaling domain (Domain::Scaling): Cuturi's u = a / (Kv), v = b / (Kᵀu) with K = exp(−C/ε) cached once
// (at the warm start, if any) and never refreshed; a sum outside the safe range is an error.
#include "ot/sinkhorn.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ot/cpu/sinkhorn_kernels.h"

namespace rematch::ot {
namespace cpu {
namespace {

// Scalings of a cached kernel stay in [e^−τ, e^τ] (see the comment at the top).
template <typename T> constexpr double kTau = std::is_same_v<T, float> ? 15.0 : 100.0;

template <typename T> class Solver {
 public:
  Solver(const ProblemView<T>& p, const SinkhornOptions& o, int threads);
  ProblemStats run();

 private:
  void row_lse();
  void col_lse(bool exact);
  void log_sweep(bool first);
  bool absorb();
  bool cached_sweep();
  void materialize();
  bool scalings_in_range() const;
  void exp_plan(T* out, int64_t ld) const;
  void kernel_rows(const std::vector<T>& v, std::vector<double>& out) const;
  void kernel_cols(const std::vector<T>& u, std::vector<double>& out);
  double marginal_error() const;
  double potential_change() const;

  const ProblemView<T>& p_;
  const SinkhornOptions& o_;
  const int64_t n_, m_;
  const int threads_;
  std::vector<T> cs_;                     // C/ε, +inf where masked
  std::vector<T> log_a_, log_b_;          // −inf for zero weights
  std::vector<T> phi_, psi_, phi_prev_;   // f/ε, g/ε (current when !cached_ or after materialize())
  std::vector<T> rlse_, clse_;            // LSEs of the last log half-steps (also the next shifts)
  bool cached_ = false;                   // the state is (φ̄, ψ̄, u, v) on the kernel K̃
  std::vector<T> kernel_, phi_bar_, psi_bar_, u_, v_, u_next_, v_next_;
  std::vector<double> s_, s_next_, t_;    // K̃v (rows), and K̃ᵀu (columns)
  std::vector<double> acc_;               // threads × m column partial sums
  std::vector<T> col_max_;                // threads × m column partial maxima
};

template <typename T>
Solver<T>::Solver(const ProblemView<T>& p, const SinkhornOptions& o, int threads)
    : p_(p), o_(o), n_(p.n), m_(p.m), threads_(std::max(1, threads)) {
  cs_.resize(static_cast<size_t>(n_ * m_));
  for (int64_t i = 0; i < n_; ++i) {
    const T* c = p_.cost + i * p_.ld_cost;
    const uint8_t* mk = p_.mask ? p_.mask + i * p_.ld_mask : nullptr;
    for (int64_t j = 0; j < m_; ++j) cs_[i * m_ + j] = mk && !mk[j] ? kInf<T> : c[j] / T(o_.epsilon);
  }
  log_a_.resize(n_);
  log_b_.resize(m_);
  for (int64_t i = 0; i < n_; ++i) log_a_[i] = p_.a[i] > 0 ? std::log(p_.a[i]) : -kInf<T>;
  for (int64_t j = 0; j < m_; ++j) log_b_[j] = p_.b[j] > 0 ? std::log(p_.b[j]) : -kInf<T>;
  phi_.assign(n_, T(0));
  psi_.assign(m_, T(0));
  for (int64_t i = 0; p_.f0 && i < n_; ++i) phi_[i] = p_.f0[i] / T(o_.epsilon);
  for (int64_t j = 0; p_.g0 && j < m_; ++j) psi_[j] = p_.g0[j] / T(o_.epsilon);
  rlse_.assign(n_, -kInf<T>);
  clse_.assign(m_, -kInf<T>);
  acc_.resize(static_cast<size_t>(threads_ * m_));
  col_max_.resize(static_cast<size_t>(threads_ * m_));
}

// rlse_i = log Σ_j exp(psi_j − cs_ij), shifted by the previous value when that keeps the sum in range.
template <typename T> void Solver<T>::row_lse() {
  const T *cs = cs_.data(), *ps = psi_.data(), *log_a = log_a_.data();
  T* lse = rlse_.data();
  const int64_t n = n_, m = m_;
  in_parallel(threads_, [&](Team team) {
    const auto [lo, hi] = team.share(n);
    for (int64_t i = lo; i < hi; ++i) {
      if (log_a[i] == -kInf<T>) continue;  // zero-weight row: φ = −inf whatever the LSE
      const T* row = cs + i * m;
      T shift = lse[i];
      double s = std::isfinite(shift) ? row_sum(row, ps, m, shift) : 0.0;
      if (!sum_ok<T>(s)) {
        shift = row_max(row, ps, m);
        s = shift == -kInf<T> ? 1.0 : row_sum(row, ps, m, shift);
      }
      lse[i] = shift + T(std::log(s));
    }
  });
}

// clse_j = log Σ_i exp(phi_i − cs_ij), row-major with per-thread column accumulators. `exact` first takes
// the column maxima as shifts; otherwise the previous clse is the shift and a column whose shifted sum is
// out of range is redone exactly, down the column.
template <typename T> void Solver<T>::col_lse(bool exact) {
  const int64_t n = n_, m = m_;
  const T *cs = cs_.data(), *phi = phi_.data(), *log_b = log_b_.data();
  T* clse = clse_.data();
  in_parallel(threads_, [&](Team team) {
    double* acc = acc_.data() + team.t * m;
    T* mx = col_max_.data() + team.t * m;
    const auto [row_lo, row_hi] = team.share(n);
    const auto [col_lo, col_hi] = team.share(m);
    if (exact) {
      std::fill(mx, mx + m, -kInf<T>);
      for (int64_t i = row_lo; i < row_hi; ++i) {
        const T* row = cs + i * m;
        const T fi = phi[i];
#pragma omp simd
        for (int64_t j = 0; j < m; ++j) mx[j] = std::max(mx[j], fi - row[j]);
      }
      team.sync();
      for (int64_t j = col_lo; j < col_hi; ++j) {
        T best = -kInf<T>;
        for (int tt = 0; tt < team.nt; ++tt) best = std::max(best, col_max_[tt * m + j]);
        clse[j] = best;
      }
      team.sync();
    }
    std::fill(acc, acc + m, 0.0);
    for (int64_t i = row_lo; i < row_hi; ++i) {
      if (phi[i] == -kInf<T>) continue;
      const T* row = cs + i * m;
      const T fi = phi[i];
#pragma omp simd simdlen(kLanes<T>)
      for (int64_t j = 0; j < m; ++j) acc[j] += static_cast<double>(exp_t<T>(fi - row[j] - clse[j]));
    }
    team.sync();
    for (int64_t j = col_lo; j < col_hi; ++j) {
      if (log_b[j] == -kInf<T>) continue;  // zero-weight column: ψ = −inf whatever the LSE
      double s = 0;
      for (int tt = 0; tt < team.nt; ++tt) s += acc_[tt * m + j];
      T shift = clse[j];
      if (!(std::isfinite(shift) && sum_ok<T>(s))) {
        shift = -kInf<T>;
        for (int64_t i = 0; i < n; ++i) shift = std::max(shift, phi[i] - cs[i * m + j]);
        s = 1;
        if (shift != -kInf<T>) {
          s = 0;
          for (int64_t i = 0; i < n; ++i) s += static_cast<double>(exp_t<T>(phi[i] - cs[i * m + j] - shift));
        }
      }
      clse[j] = shift + T(std::log(s));
    }
  });
}

// One sweep in the log domain: Sinkhorn's u = a / Kv, v = b / Kᵀu (Cuturi 2013) written for f = ε log u,
// g = ε log v — L2RM's sinkhorn_log_domain update (docs/methods/l2rm.md §1.5 step 5), up to its +1e-10 in each LSE.
template <typename T> void Solver<T>::log_sweep(bool first) {
  row_lse();
  for (int64_t i = 0; i < n_; ++i) phi_[i] = log_a_[i] == -kInf<T> ? -kInf<T> : log_a_[i] - rlse_[i];
  col_lse(first);
  for (int64_t j = 0; j < m_; ++j) psi_[j] = log_b_[j] == -kInf<T> ? -kInf<T> : log_b_[j] - clse_[j];
}

// out_i = Σ_j K̃_ij v_j, four rows at a time (four independent accumulators share each load of v).
template <typename T> void Solver<T>::kernel_rows(const std::vector<T>& v, std::vector<double>& out) const {
  const T *k = kernel_.data(), *vp = v.data();
  const int64_t n = n_, m = m_, blocks = (n_ + 3) / 4;
  double* o = out.data();
  in_parallel(threads_, [&](Team team) {
    const auto [lo, hi] = team.share(blocks);
    for (int64_t blk = lo; blk < hi; ++blk) {
      const int64_t i0 = blk * 4;
      const T* rows[4] = {k + i0 * m, k + (i0 + 1) * m, k + (i0 + 2) * m, k + (i0 + 3) * m};
      if (i0 + 4 <= n) {
        dot_rows<4>(rows, vp, m, o + i0);
      } else {
        for (int64_t i = i0; i < n; ++i) dot_rows<1>(rows + (i - i0), vp, m, o + i);
      }
    }
  });
}

// out_j = Σ_i K̃_ij u_i, row-major with per-thread accumulators, four rows per pass over the accumulators.
template <typename T> void Solver<T>::kernel_cols(const std::vector<T>& u, std::vector<double>& out) {
  const int64_t n = n_, m = m_, blocks = (n_ + 3) / 4;
  const T *k = kernel_.data(), *up = u.data();
  in_parallel(threads_, [&](Team team) {
    double* acc = acc_.data() + team.t * m;
    std::fill(acc, acc + m, 0.0);
    const auto [lo, hi] = team.share(blocks);
    for (int64_t blk = lo; blk < hi; ++blk) {
      const int64_t i0 = blk * 4;
      const T* rows[4] = {k + i0 * m, k + (i0 + 1) * m, k + (i0 + 2) * m, k + (i0 + 3) * m};
      double us[4];
      for (int r = 0; r < 4 && i0 + r < n; ++r) us[r] = up[i0 + r];
      if (i0 + 4 <= n) {
        axpy_rows<4>(rows, us, m, acc);
      } else {
        for (int64_t i = i0; i < n; ++i) axpy_rows<1>(rows + (i - i0), us + (i - i0), m, acc);
      }
    }
    team.sync();
    const auto [col_lo, col_hi] = team.share(m);
    for (int64_t j = col_lo; j < col_hi; ++j) {
      double s = 0;
      for (int tt = 0; tt < team.nt; ++tt) s += acc_[tt * m + j];
      out[j] = s;
    }
  });
}

// out_ij = exp(φ_i + ψ_j − cs_ij), the plan at the current potentials (exactly 0 where masked).
template <typename T> void Solver<T>::exp_plan(T* out, int64_t ld) const {
  const int64_t n = n_, m = m_;
  const T *cs = cs_.data(), *phi = phi_.data(), *ps = psi_.data();
  in_parallel(threads_, [&](Team team) {
    const auto [lo, hi] = team.share(n);
    for (int64_t i = lo; i < hi; ++i) {
      const T fi = phi[i];
      const T* row = cs + i * m;
      T* o = out + i * ld;
#pragma omp simd simdlen(kLanes<T>)
      for (int64_t j = 0; j < m; ++j) o[j] = exp_t<T>(fi + ps[j] - row[j]);
    }
  });
}

// Caches K̃ = exp(φ̄ ⊕ ψ̄ − cs) at the current potentials, u = v = 1 (0 for zero weights), s = K̃v. False
// when some row sum of K̃ is outside the safe range (the state is then left in the log domain).
template <typename T> bool Solver<T>::absorb() {
  kernel_.resize(cs_.size());
  phi_bar_ = phi_;
  psi_bar_ = psi_;
  exp_plan(kernel_.data(), m_);
  u_.resize(n_);
  v_.resize(m_);
  for (int64_t i = 0; i < n_; ++i) u_[i] = p_.a[i] > 0 ? T(1) : T(0);
  for (int64_t j = 0; j < m_; ++j) v_[j] = p_.b[j] > 0 ? T(1) : T(0);
  s_.resize(n_);
  kernel_rows(v_, s_);
  for (int64_t i = 0; i < n_; ++i)
    if (p_.a[i] > 0 && !sum_ok<T>(s_[i])) return cached_ = false;
  return cached_ = true;
}

// u = a / (K̃v), v = b / (K̃ᵀu), and the next K̃v. Commits only when every sum it divides by is safe.
template <typename T> bool Solver<T>::cached_sweep() {
  u_next_.resize(n_);
  v_next_.resize(m_);
  t_.resize(m_);
  s_next_.resize(n_);
  for (int64_t i = 0; i < n_; ++i) u_next_[i] = p_.a[i] > 0 ? T(double(p_.a[i]) / s_[i]) : T(0);
  kernel_cols(u_next_, t_);
  for (int64_t j = 0; j < m_; ++j) {
    if (p_.b[j] > 0 && !sum_ok<T>(t_[j])) return false;
    v_next_[j] = p_.b[j] > 0 ? T(double(p_.b[j]) / t_[j]) : T(0);
  }
  kernel_rows(v_next_, s_next_);
  for (int64_t i = 0; i < n_; ++i)
    if (p_.a[i] > 0 && !sum_ok<T>(s_next_[i])) return false;
  u_.swap(u_next_);
  v_.swap(v_next_);
  s_.swap(s_next_);
  return true;
}

// φ = φ̄ + log u, ψ = ψ̄ + log v (−inf for zero weights).
template <typename T> void Solver<T>::materialize() {
  for (int64_t i = 0; i < n_; ++i) phi_[i] = u_[i] > 0 ? phi_bar_[i] + std::log(u_[i]) : -kInf<T>;
  for (int64_t j = 0; j < m_; ++j) psi_[j] = v_[j] > 0 ? psi_bar_[j] + std::log(v_[j]) : -kInf<T>;
}

template <typename T> bool Solver<T>::scalings_in_range() const {
  const double lo = std::exp(-kTau<T>), hi = std::exp(kTau<T>);
  for (int64_t i = 0; i < n_; ++i)
    if (p_.a[i] > 0 && !(u_[i] >= lo && u_[i] <= hi)) return false;
  for (int64_t j = 0; j < m_; ++j)
    if (p_.b[j] > 0 && !(v_[j] >= lo && v_[j] <= hi)) return false;
  return true;
}

// Σ_i |(P·1)_i − a_i|: (P·1)_i = u_i (K̃v)_i on a cached kernel, exp(φ_i + LSE_i) otherwise. The columns
// are exact after a sweep.
template <typename T> double Solver<T>::marginal_error() const {
  double e = 0;
  for (int64_t i = 0; i < n_; ++i) {
    if (!(p_.a[i] > 0)) continue;
    const double row = cached_ ? double(u_[i]) * s_[i] : std::exp(double(phi_[i]) + double(rlse_[i]));
    e += std::fabs(row - double(p_.a[i]));
  }
  return e;
}

// ε·‖φ − φ_prev‖₂ over the rows of positive weight: L2RM's ‖u − u1‖₂ in cost units (docs/methods/l2rm.md §1.5).
template <typename T> double Solver<T>::potential_change() const {
  double s = 0;
  for (int64_t i = 0; i < n_; ++i) {
    if (!(p_.a[i] > 0)) continue;
    const double d = double(phi_[i]) - double(phi_prev_[i]);
    s += d * d;
  }
  return o_.epsilon * std::sqrt(s);
}

template <typename T> ProblemStats Solver<T>::run() {
  ProblemStats st;
  const bool log_domain = o_.domain == Domain::Log;
  const bool potential_rule = o_.stop == StopRule::PotentialChange;
  const std::string underflow = rematch::detail::concat(
      "scaling domain: exp(-C/epsilon) underflows or overflows at epsilon = ", o_.epsilon,
      " (it is 0 once C/epsilon exceeds ~", std::is_same_v<T, float> ? 87 : 708, "); use Domain::Log");
  if (!log_domain && !absorb()) return (st.error = underflow, st);
  // The interrupt check (SinkhornOptions::interrupted) is asked after the first sweep, then once kAskEvery entries
  // have been swept since: after every sweep of a large problem, every few hundred of a tiny one (a sweep of 3×3
  // takes about as long as the check), so that the check costs nothing measurable at any size.
  constexpr int64_t kAskEvery = int64_t{1} << 16;
  int64_t unasked = kAskEvery;
  for (int64_t it = 1; it <= o_.max_iter; ++it) {
    if (potential_rule) phi_prev_ = phi_;
    if (!(cached_ && cached_sweep())) {
      if (!log_domain) return (st.error = underflow, st);
      if (cached_) materialize();
      log_sweep(it == 1);
      if (!absorb()) row_lse();  // stay in the log domain; rlse gives the row marginals
    } else if (log_domain && !scalings_in_range()) {
      materialize();
      if (!absorb()) row_lse();
    } else if (potential_rule) {
      materialize();
    }
    st.iterations = it;
    if (o_.interrupted && (unasked += n_ * m_) >= kAskEvery) {
      unasked = 0;
      if (o_.interrupted()) return (st.error = "interrupted", st);
    }
    if (it % o_.check_every == 0 || it == o_.max_iter) {
      if ((potential_rule ? potential_change() : marginal_error()) < o_.tol) {
        st.converged = true;
        break;
      }
    }
  }
  st.marginal_error = marginal_error();
  if (cached_) materialize();
  exp_plan(p_.plan, p_.ld_plan);
  for (int64_t i = 0; i < n_; ++i) p_.f[i] = phi_[i] * T(o_.epsilon);
  for (int64_t j = 0; j < m_; ++j) p_.g[j] = psi_[j] * T(o_.epsilon);
  return st;
}

}  // namespace

template <typename T> ProblemStats solve(const ProblemView<T>& p, const SinkhornOptions& options, int threads) {
  return Solver<T>(p, options, threads).run();
}

template ProblemStats solve<float>(const ProblemView<float>&, const SinkhornOptions&, int);
template ProblemStats solve<double>(const ProblemView<double>&, const SinkhornOptions&, int);

}  // namespace cpu
}  // namespace rematch::ot
