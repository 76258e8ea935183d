// The vectorised CPU building blocks of the Sinkhorn solver (ot/cpu/sinkhorn.cpp): exp for float64, the two
// passes of a shifted row log-sum-exp, row-block dot products and axpys for the cached kernel, and the thread
// team a problem's loops are split over. Internal to ot/: not part of the public API (ot/ot.h).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "tensor/cpu/fast_exp.h"

namespace rematch::ot::cpu {

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
  double p = 1.0 / 6227020800.0;  // 1/13!, then Horner down to 1/0!
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

template <typename T> constexpr T kInf = std::numeric_limits<T>::infinity();
// A sum is trusted in [kSumLo, kSumHi]: nothing overflowed and the terms that matter are far above the
// flush-to-zero threshold of exp_t.
template <typename T> constexpr double kSumLo = std::is_same_v<T, float> ? 1e-25 : 1e-250;
template <typename T> constexpr double kSumHi = std::is_same_v<T, float> ? 1e25 : 1e250;
// Lanes of the exp loops: 512 bits of T. GCC prefers 256-bit vectors on AVX-512 machines, but exp is pure
// arithmetic and runs ~1.4x faster at full width (measured); without AVX-512 the compiler splits the lanes.
template <typename T> constexpr int kLanes = 64 / sizeof(T);

template <typename T> bool sum_ok(double s) { return s >= kSumLo<T> && s <= kSumHi<T>; }

// body(team) on `threads` OpenMP threads, or directly on the calling thread when 1: no fork, and no
// worksharing construct — an orphaned `omp for` would bind to the batched driver's team around us. Each
// member takes its share() of a loop; sync() separates phases.
struct Team {
  int t = 0, nt = 1;
  std::pair<int64_t, int64_t> share(int64_t count) const {
    return {count * t / nt, count * (t + 1) / nt};
  }
  void sync() const {
    if (nt > 1) {
#pragma omp barrier
    }
  }
};
template <typename Body> void in_parallel(int threads, Body body) {
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    body(Team{omp_get_thread_num(), omp_get_num_threads()});
  } else {
    body(Team{});
  }
}

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

// Eight double lanes (GCC vector extension) for the cached-kernel products below: an `omp simd reduction`
// over several accumulators spills them to the stack, and plain lane arrays get vectorised across rows.
using Vec8 = double __attribute__((vector_size(64)));
// v = p[0..8) as doubles. An out-parameter, not a return value: passing vectors by value across a function
// boundary changes the ABI without AVX-512 (-Wpsabi), and inlining makes it free either way.
template <typename T> inline void load8(Vec8& v, const T* p) {
  if constexpr (std::is_same_v<T, double>) {
    std::memcpy(&v, p, sizeof v);
  } else {
    using Float8 = float __attribute__((vector_size(32)));
    Float8 f;
    std::memcpy(&f, p, sizeof f);
    v = __builtin_convertvector(f, Vec8);
  }
}
// Σ_j row_r[j]·v[j] for R rows at once, R accumulators sharing each load of v; lanes summed at the end,
// then the tail.
template <int R, typename T> void dot_rows(const T* const* rows, const T* v, int64_t m, double* out) {
  Vec8 acc[R] = {};
  int64_t j = 0;
  for (; j + 8 <= m; j += 8) {
    Vec8 vj, kr;
    load8(vj, v + j);
    for (int r = 0; r < R; ++r) {
      load8(kr, rows[r] + j);
      acc[r] += kr * vj;
    }
  }
  for (int r = 0; r < R; ++r) {
    double s = 0;
    for (int l = 0; l < 8; ++l) s += acc[r][l];
    for (int64_t jj = j; jj < m; ++jj) s += double(rows[r][jj]) * double(v[jj]);
    out[r] = s;
  }
}

// acc[j] += Σ_r u[r]·row_r[j] for R rows, one pass over the accumulators (eight lanes at a time).
template <int R, typename T> void axpy_rows(const T* const* rows, const double* u, int64_t m, double* acc) {
  int64_t j = 0;
  for (; j + 8 <= m; j += 8) {
    Vec8 a, kr;
    std::memcpy(&a, acc + j, sizeof a);
    for (int r = 0; r < R; ++r) {
      load8(kr, rows[r] + j);
      a += u[r] * kr;
    }
    std::memcpy(acc + j, &a, sizeof a);
  }
  for (; j < m; ++j)
    for (int r = 0; r < R; ++r) acc[j] += u[r] * double(rows[r][j]);
}

}  // namespace rematch::ot::cpu
