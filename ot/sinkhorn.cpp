// The CPU Sinkhorn solver for one problem (float32 and float64) and the single-problem entry point.
//
// Layout: C is copied once, scaled and masked, into cs = C/ε (+inf where masked), so a log-domain entry is
// one subtraction and one exp, and a masked entry is exp(−inf) = 0 exactly. Both half-steps walk cs row by
// row so every inner loop runs along contiguous memory and vectorises (`omp simd`):
//  - row half-step: one LSE per row over j;
//  - column half-step: per-column accumulators, updated row after row (no transposed copy).
// Each LSE is shifted by that row's (column's) LSE of the previous sweep, which is within a few units of the
// new one once the iteration settles, so one pass suffices; when the shifted sum leaves a safe range (first
// sweep, or a large jump) the LSE is recomputed with the exact max (two passes). Sums are accumulated in
// double for both dtypes. exp is a vectorisable polynomial (fast_expf for float32, exp_f64 below).
#include "ot/sinkhorn.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>
#include <vector>

#include "ot/batched.h"
#include "tensor/cpu/fast_exp.h"

namespace rematch::ot {
namespace cpu {
namespace {

// exp for float64 in plain arithmetic so that `omp simd` loops vectorise it: x = n·ln2 + r with
// |r| ≤ ln2/2 (Cody–Waite, two-part ln2), e^r by its Taylor polynomial of degree 13 (truncation below
// 5e-18), 2^n built in the exponent bits. Within ~2 ulp of exp on [−708.39, 709]; below that 0 (results
// under DBL_MIN are flushed), above +inf, NaN stays NaN.
inline double exp_f64(double x) {
  constexpr double kLo = -708.39641853226410, kHi = 709.0, kMagic = 6755399441055744.0;  // 1.5·2^52
  const double c = x < kLo ? kLo : (x > kHi ? kHi : x);
  const double t = c * 1.4426950408889634074 + kMagic;  // round(c/ln2) sits in t's low mantissa bits
  const double n = t - kMagic;
  double r = c - n * 6.93145751953125e-1;
  r = r - n * 1.42860682030941723212e-6;
  double p = 1.0 / 6227020800.0;                        // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const int64_t k = __builtin_bit_cast(int64_t, t) - __builtin_bit_cast(int64_t, kMagic);
  const double scale = __builtin_bit_cast(double, (k + 1023) << 52);
  double y = p * scale;
  y = x < kLo ? 0.0 : y;
  y = x > kHi ? __builtin_inf() : y;
  return x != x ? x : y;
}

template <typename T> inline T exp_t(T x) {
  if constexpr (std::is_same_v<T, float>) return rematch::cpu::fast_expf(x);
  else return exp_f64(x);
}

// A shifted sum is trusted when it lies in [kSumLo, kSumHi]: no term overflowed, and the terms that matter
// are far above the flush-to-zero threshold of exp_t.
template <typename T> constexpr double kSumLo = std::is_same_v<T, float> ? 1e-25 : 1e-250;
template <typename T> constexpr double kSumHi = std::is_same_v<T, float> ? 1e25 : 1e250;
template <typename T> constexpr T kInf = std::numeric_limits<T>::infinity();

template <typename T> bool sum_ok(double s) { return s >= kSumLo<T> && s <= kSumHi<T>; }

// Lanes of the exp loops: 512 bits of T. GCC prefers 256-bit vectors on AVX-512 machines, but exp is pure
// arithmetic and runs ~1.4x faster at full width (measured); without AVX-512 the compiler splits the lanes.
template <typename T> constexpr int kLanes = 64 / sizeof(T);

// Σ_j exp(psi_j − row_j − shift) and max_j (psi_j − row_j): the two passes of a row LSE.
template <typename T> double row_sum(const T* row, const T* psi, int64_t m, T shift) {
  double s = 0;
#pragma omp simd reduction(+ : s) simdlen(kLanes<T>)
  for (int64_t j = 0; j < m; ++j) s += static_cast<double>(exp_t<T>(psi[j] - row[j] - shift));
  return s;
}
template <typename T> T row_max(const T* row, const T* psi, int64_t m) {
  T mx = -kInf<T>;
#pragma omp simd reduction(max : mx)
  for (int64_t j = 0; j < m; ++j) mx = std::max(mx, psi[j] - row[j]);
  return mx;
}

template <typename T> class Solver {
 public:
  Solver(const ProblemView<T>& p, const SinkhornOptions& o, int threads)
      : p_(p), o_(o), n_(p.n), m_(p.m), threads_(std::max(1, threads)), inv_eps_(T(1) / T(o.epsilon)) {}

  std::string prepare();
  ProblemStats run_log();
  ProblemStats run_scaling();

 private:
  void row_lse();
  void col_lse(bool exact);
  template <typename RowSum> double row_error(RowSum row_sum_of) const;
  double potential_change(const std::vector<T>& now, const std::vector<T>& prev) const;
  bool check_due(int64_t it) const;
  std::string scaling_failure(const char* side, int64_t index) const;

  const ProblemView<T>& p_;
  const SinkhornOptions& o_;
  const int64_t n_, m_;
  const int threads_;
  const T inv_eps_;
  std::vector<T> cs_;                      // C/ε (+inf masked), or K = exp(−C/ε) in the scaling domain
  std::vector<T> log_a_, log_b_;           // −inf for zero weights
  std::vector<T> phi_, psi_, phi_prev_;    // f/ε, g/ε (scaling domain: u, v and log u of the last sweep)
  std::vector<T> rlse_, clse_;             // LSEs of the last half-steps (also the next shifts)
  std::vector<T> col_max_;                 // threads × m
  std::vector<double> col_acc_;            // threads × m
};

template <typename T> std::string Solver<T>::prepare() {
  double sa = 0, sb = 0;
  log_a_.resize(n_);
  log_b_.resize(m_);
  for (int64_t i = 0; i < n_; ++i) {
    const T v = p_.a[i];
    if (!(std::isfinite(v) && v >= 0)) return rematch::detail::concat("weight a[", i, "] = ", v, " must be finite and >= 0");
    log_a_[i] = v > 0 ? std::log(v) : -kInf<T>;
    sa += v;
  }
  for (int64_t j = 0; j < m_; ++j) {
    const T v = p_.b[j];
    if (!(std::isfinite(v) && v >= 0)) return rematch::detail::concat("weight b[", j, "] = ", v, " must be finite and >= 0");
    log_b_[j] = v > 0 ? std::log(v) : -kInf<T>;
    sb += v;
  }
  if (!(sa > 0)) return "the weights a sum to 0: there is no mass to transport";
  const double rel = std::is_same_v<T, float> ? 1e-5 : 1e-6;
  if (std::fabs(sa - sb) > rel * std::max(sa, sb))
    return rematch::detail::concat("the marginals have different sums: sum(a) = ", sa, " but sum(b) = ", sb,
                          " (balanced OT needs equal masses to ", rel,
                          " relative; partial_sinkhorn transports a smaller mass)");
  // cs = C/ε, masked → +inf. any: the row (column) has an unmasked entry; reach: one in a column (row) of
  // positive weight — without it a row (column) of positive weight can send (receive) nothing.
  cs_.resize(static_cast<size_t>(n_ * m_));
  std::vector<uint8_t> row_any(n_, 0), col_any(m_, 0), row_reach(n_, 0), col_reach(m_, 0);
  for (int64_t i = 0; i < n_; ++i) {
    const T* c = p_.cost + i * p_.ld_cost;
    const uint8_t* mk = p_.mask ? p_.mask + i * p_.ld_mask : nullptr;
    T* out = cs_.data() + i * m_;
    for (int64_t j = 0; j < m_; ++j) {
      if (mk && !mk[j]) {
        out[j] = kInf<T>;
        continue;
      }
      out[j] = c[j] / T(o_.epsilon);
      if (!std::isfinite(out[j]))
        return rematch::detail::concat("cost C[", i, ", ", j, "] = ", c[j],
                              std::isfinite(c[j]) ? " overflows when divided by epsilon" : " is not finite",
                              " (forbid an entry with the mask instead)");
      row_any[i] = col_any[j] = 1;
      row_reach[i] |= p_.b[j] > 0;
      col_reach[j] |= p_.a[i] > 0;
    }
  }
  for (int64_t i = 0; i < n_; ++i)
    if (p_.a[i] > 0 && !row_reach[i])
      return row_any[i] ? rematch::detail::concat("row ", i, " has weight a[", i, "] = ", p_.a[i],
                                         " but its unmasked entries all lie in zero-weight columns: no plan has these marginals")
                        : rematch::detail::concat("row ", i, " is all-masked but has weight a[", i, "] = ", p_.a[i],
                                         " > 0: no plan has these marginals (unmask an entry or give the row weight 0)");
  for (int64_t j = 0; j < m_; ++j)
    if (p_.b[j] > 0 && !col_reach[j])
      return col_any[j] ? rematch::detail::concat("column ", j, " has weight b[", j, "] = ", p_.b[j],
                                         " but its unmasked entries all lie in zero-weight rows: no plan has these marginals")
                        : rematch::detail::concat("column ", j, " is all-masked but has weight b[", j, "] = ", p_.b[j],
                                         " > 0: no plan has these marginals (unmask an entry or give the column weight 0)");
  phi_.assign(n_, T(0));
  psi_.assign(m_, T(0));
  for (int64_t i = 0; p_.f0 && i < n_; ++i) phi_[i] = p_.f0[i] * inv_eps_;
  for (int64_t j = 0; p_.g0 && j < m_; ++j) psi_[j] = p_.g0[j] * inv_eps_;
  for (int64_t i = 0; i < n_; ++i)
    if (!std::isfinite(phi_[i])) return rematch::detail::concat("warm start f0[", i, "] = ", p_.f0[i], " is not finite");
  for (int64_t j = 0; j < m_; ++j)
    if (!std::isfinite(psi_[j])) return rematch::detail::concat("warm start g0[", j, "] = ", p_.g0[j], " is not finite");
  rlse_.assign(n_, -kInf<T>);
  clse_.assign(m_, -kInf<T>);
  return {};
}

// rlse_i = log Σ_j exp(psi_j − cs_ij), shifted by the previous value when that keeps the sum in range.
template <typename T> void Solver<T>::row_lse() {
  const T* cs = cs_.data();
  const T* ps = psi_.data();
  T* lse = rlse_.data();
  const T* log_a = log_a_.data();
  const int64_t m = m_;
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (int64_t i = 0; i < n_; ++i) {
    if (log_a[i] == -kInf<T>) continue;  // zero-weight row: f = −inf whatever the LSE
    const T* row = cs + i * m;
    T shift = lse[i];
    double s = std::isfinite(shift) ? row_sum(row, ps, m, shift) : 0.0;
    if (!sum_ok<T>(s)) {
      shift = row_max(row, ps, m);
      s = shift == -kInf<T> ? 1.0 : row_sum(row, ps, m, shift);
    }
    lse[i] = shift + T(std::log(s));
  }
}

// clse_j = log Σ_i exp(phi_i − cs_ij), row-major with per-thread column accumulators. `exact` first finds
// the column maxima (first sweep); otherwise the previous clse is the shift and columns whose shifted sum
// is out of range are redone exactly, down the column.
template <typename T> void Solver<T>::col_lse(bool exact) {
  const int64_t n = n_, m = m_;
  col_acc_.resize(static_cast<size_t>(threads_ * m));
  col_max_.resize(static_cast<size_t>(threads_ * m));
  const T* cs = cs_.data();
  const T* phi = phi_.data();
  const T* log_b = log_b_.data();
  T* clse = clse_.data();
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
  {
    const int t = omp_get_thread_num();
    double* acc = col_acc_.data() + t * m;
    T* mx = col_max_.data() + t * m;
    if (exact) {
      std::fill(mx, mx + m, -kInf<T>);
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i) {
        if (phi[i] == -kInf<T>) continue;
        const T* row = cs + i * m;
        const T fi = phi[i];
#pragma omp simd
        for (int64_t j = 0; j < m; ++j) mx[j] = std::max(mx[j], fi - row[j]);
      }
#pragma omp for schedule(static)
      for (int64_t j = 0; j < m; ++j) {
        T best = -kInf<T>;
        for (int tt = 0; tt < threads_; ++tt) best = std::max(best, col_max_[tt * m + j]);
        clse[j] = best;
      }
    }
    std::fill(acc, acc + m, 0.0);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      if (phi[i] == -kInf<T>) continue;
      const T* row = cs + i * m;
      const T fi = phi[i];
#pragma omp simd simdlen(kLanes<T>)
      for (int64_t j = 0; j < m; ++j) acc[j] += static_cast<double>(exp_t<T>(fi - row[j] - clse[j]));
    }
#pragma omp for schedule(static)
    for (int64_t j = 0; j < m; ++j) {
      if (log_b[j] == -kInf<T>) continue;  // zero-weight column: g = −inf whatever the LSE
      double s = 0;
      for (int tt = 0; tt < threads_; ++tt) s += col_acc_[tt * m + j];
      T shift = clse[j];
      if (!(std::isfinite(shift) && sum_ok<T>(s))) {
        shift = -kInf<T>;
        for (int64_t i = 0; i < n; ++i) shift = std::max(shift, phi[i] - cs[i * m + j]);
        s = 0;
        for (int64_t i = 0; i < n && shift != -kInf<T>; ++i)
          s += static_cast<double>(exp_t<T>(phi[i] - cs[i * m + j] - shift));
        if (shift == -kInf<T>) s = 1;
      }
      clse[j] = shift + T(std::log(s));
    }
  }
}

// Σ_i |(P·1)_i − a_i| from the row sums of P (rows of zero weight carry exactly 0).
template <typename T> template <typename RowSum> double Solver<T>::row_error(RowSum row_sum_of) const {
  double e = 0;
  for (int64_t i = 0; i < n_; ++i)
    if (log_a_[i] != -kInf<T>) e += std::fabs(row_sum_of(i) - double(p_.a[i]));
  return e;
}

// ε·‖now − prev‖₂ of the row log-potentials over the rows of positive weight (the others stay at −inf).
template <typename T> double Solver<T>::potential_change(const std::vector<T>& now, const std::vector<T>& prev) const {
  double s = 0;
  for (int64_t i = 0; i < n_; ++i) {
    if (log_a_[i] == -kInf<T>) continue;
    const double d = double(now[i]) - double(prev[i]);
    s += d * d;
  }
  return o_.epsilon * std::sqrt(s);
}

template <typename T> bool Solver<T>::check_due(int64_t it) const {
  return it % o_.check_every == 0 || it == o_.max_iter;
}

template <typename T> ProblemStats Solver<T>::run_log() {
  ProblemStats st;
  auto row_sum_of = [&](int64_t i) { return std::exp(double(phi_[i]) + double(rlse_[i])); };
  row_lse();
  for (int64_t it = 1; it <= o_.max_iter; ++it) {
    phi_prev_ = phi_;
    for (int64_t i = 0; i < n_; ++i) phi_[i] = log_a_[i] == -kInf<T> ? -kInf<T> : log_a_[i] - rlse_[i];
    col_lse(it == 1);
    for (int64_t j = 0; j < m_; ++j) psi_[j] = log_b_[j] == -kInf<T> ? -kInf<T> : log_b_[j] - clse_[j];
    row_lse();  // the next sweep's row LSE, and this sweep's row marginals
    st.iterations = it;
    if (check_due(it)) {
      const double err =
          o_.stop == StopRule::MarginalL1 ? row_error(row_sum_of) : potential_change(phi_, phi_prev_);
      if (err < o_.tol) {
        st.converged = true;
        break;
      }
    }
  }
  st.marginal_error = row_error(row_sum_of);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (int64_t i = 0; i < n_; ++i) {
    const T* row = cs_.data() + i * m_;
    const T* ps = psi_.data();
    T* out = p_.plan + i * p_.ld_plan;
    const T fi = phi_[i];
#pragma omp simd
    for (int64_t j = 0; j < m_; ++j) out[j] = exp_t<T>(fi + ps[j] - row[j]);
  }
  for (int64_t i = 0; i < n_; ++i) p_.f[i] = phi_[i] * T(o_.epsilon);
  for (int64_t j = 0; j < m_; ++j) p_.g[j] = psi_[j] * T(o_.epsilon);
  return st;
}

template <typename T> std::string Solver<T>::scaling_failure(const char* side, int64_t index) const {
  return rematch::detail::concat("scaling domain: ", side, " ", index, " of exp(-C/epsilon) underflows or overflows at epsilon = ",
                        o_.epsilon, " (exp(-C/eps) is 0 once C/eps exceeds ~", std::is_same_v<T, float> ? 87 : 708,
                        "); use Domain::Log");
}

// Scaling domain (Cuturi 2013, Alg. 1): u = a / (K v), v = b / (Kᵀ u) with K = exp(−C/ε). Here phi_ holds
// u, psi_ holds v, rlse_ holds K v, and cs_ is overwritten by K.
template <typename T> ProblemStats Solver<T>::run_scaling() {
  ProblemStats st;
  for (T& k : cs_) k = exp_t<T>(-k);  // masked: exp(−inf) = 0
  for (T& v : phi_) v = std::exp(v);
  for (T& v : psi_) v = std::exp(v);
  std::vector<double> ktu(m_);
  std::vector<T> log_u(n_), log_u_prev(n_);
  auto k_times_v = [&] {
    for (int64_t i = 0; i < n_; ++i) {
      const T* row = cs_.data() + i * m_;
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < m_; ++j) s += double(row[j]) * double(psi_[j]);
      rlse_[i] = T(s);
    }
  };
  auto take_log_u = [&] {
    for (int64_t i = 0; i < n_; ++i) log_u[i] = phi_[i] > 0 ? std::log(phi_[i]) : -kInf<T>;
  };
  auto row_sum_of = [&](int64_t i) { return double(phi_[i]) * double(rlse_[i]); };
  k_times_v();
  take_log_u();
  for (int64_t it = 1; it <= o_.max_iter; ++it) {
    log_u_prev.swap(log_u);
    for (int64_t i = 0; i < n_; ++i) {
      phi_[i] = p_.a[i] > 0 ? p_.a[i] / rlse_[i] : T(0);
      if (!(std::isfinite(phi_[i]) && (phi_[i] > 0 || p_.a[i] == 0))) return (st.error = scaling_failure("row", i), st);
    }
    std::fill(ktu.begin(), ktu.end(), 0.0);
    for (int64_t i = 0; i < n_; ++i) {
      const T* row = cs_.data() + i * m_;
      const double ui = phi_[i];
#pragma omp simd
      for (int64_t j = 0; j < m_; ++j) ktu[j] += ui * double(row[j]);
    }
    for (int64_t j = 0; j < m_; ++j) {
      psi_[j] = p_.b[j] > 0 ? T(double(p_.b[j]) / ktu[j]) : T(0);
      if (!(std::isfinite(psi_[j]) && (psi_[j] > 0 || p_.b[j] == 0))) return (st.error = scaling_failure("column", j), st);
    }
    k_times_v();
    take_log_u();
    st.iterations = it;
    if (check_due(it)) {
      const double err =
          o_.stop == StopRule::MarginalL1 ? row_error(row_sum_of) : potential_change(log_u, log_u_prev);
      if (err < o_.tol) {
        st.converged = true;
        break;
      }
    }
  }
  st.marginal_error = row_error(row_sum_of);
  for (int64_t i = 0; i < n_; ++i) {
    const T* row = cs_.data() + i * m_;
    T* out = p_.plan + i * p_.ld_plan;
    for (int64_t j = 0; j < m_; ++j) out[j] = phi_[i] * row[j] * psi_[j];
    p_.f[i] = T(o_.epsilon) * log_u[i];
  }
  for (int64_t j = 0; j < m_; ++j) p_.g[j] = psi_[j] > 0 ? T(o_.epsilon) * std::log(psi_[j]) : -kInf<T>;
  return st;
}

}  // namespace

template <typename T> ProblemStats solve(const ProblemView<T>& p, const SinkhornOptions& options, int threads) {
  Solver<T> s(p, options, threads);
  std::string error = s.prepare();
  if (!error.empty()) {
    ProblemStats st;
    st.error = std::move(error);
    return st;
  }
  return options.domain == Domain::Log ? s.run_log() : s.run_scaling();
}

template ProblemStats solve<float>(const ProblemView<float>&, const SinkhornOptions&, int);
template ProblemStats solve<double>(const ProblemView<double>&, const SinkhornOptions&, int);

}  // namespace cpu

SinkhornResult sinkhorn(const Tensor& C, const Tensor& a, const Tensor& b, const SinkhornOptions& options) {
  return detail::solve_single("sinkhorn", C, a, b, options);
}

}  // namespace rematch::ot
