// The math of the elementwise ops of tensor/elementwise_ops.h, written once for both backends: this header is
// compiled by g++ (tensor/cpu/elementwise.cpp) and by nvcc (tensor/cuda/elementwise.cu). Each functor is a
// `template <class Math, class T>`, instantiated only for the dtypes its row accepts; Math is the backend's
// policy: static members exp, log, log1p, sqrt, tanh, sin, tan, lgamma, pow and is_finite for float and double (the CPU's, in
// tensor/cpu/elementwise.cpp: fast_expf for float32 exp, std:: otherwise; CUDA's, in tensor/cuda/elementwise.cu:
// tensor/cuda/device_math.cuh, and is_finite as two comparisons).
// Everything else (comparisons, casts, NaN handling) is this one code on both devices, so integer and bool
// results agree exactly and float results differ only by the backends' transcendentals; sqrt and division are
// IEEE-rounded on both.
#pragma once

#include <limits>
#include <type_traits>

#include "tensor/dtype.h"

#ifndef REMATCH_HOST_DEVICE  // (tensor/philox.h defines it the same way)
#ifdef __CUDACC__
#define REMATCH_HOST_DEVICE __host__ __device__
#else
#define REMATCH_HOST_DEVICE
#endif
#endif

namespace rematch::elementwise {

// ---- unary ---------------------------------------------------------------------------------------------------
template <class M, class T> struct Neg {
  REMATCH_HOST_DEVICE T operator()(T v) const { return static_cast<T>(-v); }
};
// (uint8 is never below zero; its branch only keeps compilers from warning about the comparison.)
template <class M, class T> struct Abs {
  REMATCH_HOST_DEVICE T operator()(T v) const {
    if constexpr (std::is_unsigned_v<T>) return v;
    else return v < T(0) ? static_cast<T>(-v) : v;
  }
};
template <class M, class T> struct Square {
  REMATCH_HOST_DEVICE T operator()(T v) const { return static_cast<T>(v * v); }
};
// NaN gives 0: both comparisons fail.
template <class M, class T> struct Sign {
  REMATCH_HOST_DEVICE T operator()(T v) const {
    if constexpr (std::is_unsigned_v<T>) return static_cast<T>(T(0) < v);
    else return static_cast<T>((T(0) < v) - (v < T(0)));
  }
};
template <class M, class T> struct Relu {
  REMATCH_HOST_DEVICE T operator()(T v) const { return v > T(0) ? v : T(0); }
};
// Integers are always finite.
template <class M, class T> struct IsFinite {
  REMATCH_HOST_DEVICE bool operator()(T v) const {
    if constexpr (std::is_floating_point_v<T>) return M::is_finite(v);
    else return true;
  }
};
template <class M, class T> struct LogicalNot {
  REMATCH_HOST_DEVICE bool operator()(T v) const { return !v; }
};
template <class M, class T> struct Exp {
  REMATCH_HOST_DEVICE T operator()(T v) const { return M::exp(v); }
};
template <class M, class T> struct Log {
  REMATCH_HOST_DEVICE T operator()(T v) const { return M::log(v); }
};
template <class M, class T> struct Log1p {
  REMATCH_HOST_DEVICE T operator()(T v) const { return M::log1p(v); }
};
template <class M, class T> struct Sqrt {
  REMATCH_HOST_DEVICE T operator()(T v) const { return M::sqrt(v); }
};
// A division rather than an rsqrt instruction: both devices round the quotient the same way.
template <class M, class T> struct Rsqrt {
  REMATCH_HOST_DEVICE T operator()(T v) const { return T(1) / M::sqrt(v); }
};
template <class M, class T> struct Reciprocal {
  REMATCH_HOST_DEVICE T operator()(T v) const { return T(1) / v; }
};
template <class M, class T> struct Tanh {
  REMATCH_HOST_DEVICE T operator()(T v) const { return M::tanh(v); }
};
template <class M, class T> struct Sigmoid {
  REMATCH_HOST_DEVICE T operator()(T v) const { return T(1) / (T(1) + M::exp(-v)); }
};
// log|Γ(x)|: the backend's lgamma (glibc's re-entrant lgamma_r on the CPU, CUDA's lgamma); +inf at the poles
// 0, −1, −2, ... (as torch.lgamma).
template <class M, class T> struct Lgamma {
  REMATCH_HOST_DEVICE T operator()(T v) const { return M::lgamma(v); }
};

namespace polygamma_detail {
// Whether x is an integer (every float of magnitude ≥ 2^52 is; ±inf counts as one), without std::trunc, so
// that nvcc and g++ compile the one code.
template <class T> REMATCH_HOST_DEVICE bool is_integer(T x) {
  const T big = T(4503599627370496.0);  // 2^52
  if (!(x < big && x > -big)) return x == x;  // ±inf and huge values yes, NaN no
  return x == static_cast<T>(static_cast<long long>(x));
}
// x − n for the integer n nearest x (|x| < 2^52), exact: tan(πx) = tan(πr) and sin²(πx) = sin²(πr) with r in
// [−1/2, 1/2], computed without the rounding of π·x that would swamp them near the poles.
template <class T> REMATCH_HOST_DEVICE T from_nearest_integer(T x) {
  T r = x - static_cast<T>(static_cast<long long>(x));
  if (r > T(0.5)) r -= T(1);
  if (r < T(-0.5)) r += T(1);
  return r;
}
constexpr double kPi = 3.14159265358979323846;
}  // namespace polygamma_detail

// ψ(x), PyTorch's calc_digamma (aten/src/ATen/native/Math.h, after Cephes psi): ∓inf at ±0, NaN at the negative
// integers, the reflection ψ(x) = ψ(1 − x) − π / tan(πx) below 0 (tan(πx) of x's distance to the nearest
// integer, where PyTorch takes its fractional part: the same within rounding, closer near the poles), the
// recurrence ψ(x) = ψ(x + 1) − 1/x up to x ≥ 10, then the asymptotic series log x − 1/(2x) − Σ B_2k/(2k x^2k).
template <class M, class T> struct Digamma {
  REMATCH_HOST_DEVICE T operator()(T x) const {
    using namespace polygamma_detail;
    constexpr T inf = std::numeric_limits<T>::infinity();
    if (x == T(0)) return T(1) / x > T(0) ? -inf : inf;  // ψ(+0) = −inf, ψ(−0) = +inf
    T reflect = T(0);
    if (x < T(0)) {
      if (is_integer(x)) return std::numeric_limits<T>::quiet_NaN();
      reflect = -T(kPi) / M::tan(T(kPi) * from_nearest_integer(x));
      x = T(1) - x;
    }
    T result = T(0);
    while (x < T(10)) {
      result -= T(1) / x;
      x += T(1);
    }
    if (x == T(10)) return reflect + result + T(2.25175258906672110764);
    T y = T(0);
    if (x < T(1.0e17)) {
      const T z = T(1) / (x * x);
      T p = T(8.33333333333333333333E-2);
      p = p * z + T(-2.10927960927960927961E-2);
      p = p * z + T(7.57575757575757575758E-3);
      p = p * z + T(-4.16666666666666666667E-3);
      p = p * z + T(3.96825396825396825397E-3);
      p = p * z + T(-8.33333333333333333333E-3);
      p = p * z + T(8.33333333333333333333E-2);
      y = z * p;
    }
    return reflect + result + M::log(x) - T(0.5) / x - y;
  }
};

// ψ'(x), digamma's derivative, exactly as PyTorch computes it (calc_trigamma, aten/src/ATen/native/Math.h, the
// gradient of torch.digamma and torch.polygamma(1, x)): the reflection ψ'(x) = π²/sin²(πx) − ψ'(1 − x) below 1/2,
// six steps of the recurrence ψ'(x) = ψ'(x + 1) + 1/x², then the asymptotic series 1/x + 1/(2x²) + 1/(6x³) −
// 1/(30x⁵) + 1/(42x⁷). Its truncation error is about 1e-8 relative (at x ≈ 6.5, less beyond); kept so that
// DECL's gradients are the official code's (tests/train/decl_golden_step_test.cpp), not more accurate ones.
template <class M, class T> struct Trigamma {
  REMATCH_HOST_DEVICE T operator()(T x) const {
    using namespace polygamma_detail;
    T sign = T(1), result = T(0);
    if (x < T(0.5)) {
      sign = T(-1);
      const T sin_pi_x = M::sin(T(kPi) * x);
      result -= (T(kPi) * T(kPi)) / (sin_pi_x * sin_pi_x);
      x = T(1) - x;
    }
    for (int i = 0; i < 6; ++i) {
      result += T(1) / (x * x);
      x += T(1);
    }
    const T ixx = T(1) / (x * x);
    result += (T(1) + T(1) / (T(2) * x) + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / x;
    return sign * result;
  }
};

// ---- scalar --------------------------------------------------------------------------------------------------
namespace polygamma_detail {
// 1 / v^e for a positive integer e, as a product: the same rounding on both devices (no pow).
template <class T> REMATCH_HOST_DEVICE T inverse_power(T v, int e) {
  T p = T(1);
  for (int i = 0; i < e; ++i) p *= v;
  return T(1) / p;
}
template <class T> REMATCH_HOST_DEVICE T magnitude(T v) { return v < T(0) ? -v : v; }
}  // namespace polygamma_detail

// ψ^(n)(x) of order n = s, the polygamma function (torch.polygamma): the Digamma functor for n = 0, Trigamma for
// n = 1 (so polygamma(1, x) is exactly digamma's gradient), and for n ≥ 2 (−1)^(n+1) n! ζ(n+1, x) with the Hurwitz
// zeta function computed as Cephes' zeta does (PyTorch's polygamma for n ≥ 2, aten/src/ATen/native/Math.h): the
// terms (x+k)^-(n+1) summed directly until x + k > 9 (and at least ten of them), then the Euler–Maclaurin
// remainder with up to 12 Bernoulli terms. Powers are products, so CPU and CUDA differ only by rounding. The
// poles x = 0, −1, −2, ... and −inf give torch's ±inf, +inf its NaN. An order that is not an integer in 0..64,
// and finite arguments below −2^20 (whose direct sum would take over a million terms), give NaN.
template <class M, class T> struct PolygammaScalar {
  int n;
  explicit PolygammaScalar(double sd)
      : n(sd >= 0 && sd <= 64 && sd == static_cast<double>(static_cast<int>(sd)) ? static_cast<int>(sd) : -1) {}
  REMATCH_HOST_DEVICE T operator()(T x) const {
    using namespace polygamma_detail;
    if (n == 0) return Digamma<M, T>()(x);
    if (n == 1) return Trigamma<M, T>()(x);
    constexpr T inf = std::numeric_limits<T>::infinity();
    const T sign = n % 2 ? T(1) : T(-1);
    if (n < 0 || x != x || x == inf) return std::numeric_limits<T>::quiet_NaN();  // torch's NaN at +inf too
    if (x <= T(0) && is_integer(x)) return sign * inf;                           // the poles, and −inf
    if (x < T(-1048576.0)) return std::numeric_limits<T>::quiet_NaN();
    T factorial = T(1);
    for (int k = 2; k <= n; ++k) factorial *= T(k);
    const int s = n + 1;
    const T eps = std::numeric_limits<T>::epsilon() / T(2);
    // (2j)! / B_2j for j = 1 .. 12 (Cephes zeta.c, A[]).
    const T kA[12] = {T(12.0), T(-720.0), T(30240.0), T(-1209600.0), T(47900160.0),
                      T(-1.8924375803183791606e9), T(7.47242496e10), T(-2.950130727918164224e12),
                      T(1.1646782814350067249e14), T(-4.5979787224074726105e15), T(1.8152105401943546773e17),
                      T(-7.1661652561756670113e18)};
    T sum = inverse_power(x, s), a = x, b = T(0);
    for (int i = 0; i < 9 || a <= T(9);) {
      ++i;
      a += T(1);
      b = inverse_power(a, s);
      sum += b;
      if (magnitude(b / sum) < eps) return sign * factorial * sum;
    }
    const T w = a;
    sum += b * w / T(s - 1);
    sum -= T(0.5) * b;
    T rising = T(1), k = T(0);
    for (int j = 0; j < 12; ++j) {
      rising *= T(s) + k;
      b /= w;
      const T t = rising * b / kA[j];
      sum += t;
      if (magnitude(t / sum) < eps) break;
      k += T(1);
      rising *= T(s) + k;
      b /= w;
      k += T(1);
    }
    return sign * factorial * sum;
  }
};

// Built on the host from the double s: the arithmetic ones hold s converted to T, the comparisons s itself.
template <class M, class T> struct AddScalar {
  T s;
  explicit AddScalar(double sd) : s(static_cast<T>(sd)) {}
  REMATCH_HOST_DEVICE T operator()(T v) const { return static_cast<T>(v + s); }
};
template <class M, class T> struct MulScalar {
  T s;
  explicit MulScalar(double sd) : s(static_cast<T>(sd)) {}
  REMATCH_HOST_DEVICE T operator()(T v) const { return static_cast<T>(v * s); }
};
template <class M, class T> struct RSubScalar {
  T s;
  explicit RSubScalar(double sd) : s(static_cast<T>(sd)) {}
  REMATCH_HOST_DEVICE T operator()(T v) const { return static_cast<T>(s - v); }
};
template <class M, class T> struct RDivScalar {
  T s;
  explicit RDivScalar(double sd) : s(static_cast<T>(sd)) {}
  REMATCH_HOST_DEVICE T operator()(T v) const { return s / v; }
};
// NaN in x stays NaN (the comparison fails); a NaN bound leaves x unchanged.
template <class M, class T> struct ClampMinScalar {
  T s;
  explicit ClampMinScalar(double sd) : s(static_cast<T>(sd)) {}
  REMATCH_HOST_DEVICE T operator()(T v) const { return v < s ? s : v; }
};
template <class M, class T> struct ClampMaxScalar {
  T s;
  explicit ClampMaxScalar(double sd) : s(static_cast<T>(sd)) {}
  REMATCH_HOST_DEVICE T operator()(T v) const { return v > s ? s : v; }
};
template <class M, class T> struct LeakyReluScalar {
  T s;
  explicit LeakyReluScalar(double sd) : s(static_cast<T>(sd)) {}
  REMATCH_HOST_DEVICE T operator()(T v) const { return v > T(0) ? v : v * s; }
};
template <class M, class T> struct PowScalar {
  T s;
  explicit PowScalar(double sd) : s(static_cast<T>(sd)) {}
  REMATCH_HOST_DEVICE T operator()(T v) const { return M::pow(v, s); }
};
template <class M, class T> struct PowSquare {
  REMATCH_HOST_DEVICE T operator()(T v) const { return v * v; }
};

#define REMATCH_COMPARE_SCALAR(Name, op)                                                      \
  template <class M, class T> struct Name {                                                  \
    double s;                                                                                \
    explicit Name(double sd) : s(sd) {}                                                      \
    REMATCH_HOST_DEVICE bool operator()(T v) const { return static_cast<double>(v) op s; }   \
  };
REMATCH_COMPARE_SCALAR(EqScalar, ==)
REMATCH_COMPARE_SCALAR(NeScalar, !=)
REMATCH_COMPARE_SCALAR(LtScalar, <)
REMATCH_COMPARE_SCALAR(LeScalar, <=)
REMATCH_COMPARE_SCALAR(GtScalar, >)
REMATCH_COMPARE_SCALAR(GeScalar, >=)
#undef REMATCH_COMPARE_SCALAR

// with_scalar_functor(type_tag<F>{}, s, run) calls run with the functor of a scalar op for s: F(s), except for
// pow, whose exponents 2 and 0.5 take the exact x*x and sqrt(x).
template <class F, class Run> void with_scalar_functor(type_tag<F>, double sd, Run&& run) { run(F(sd)); }
template <class M, class T, class Run> void with_scalar_functor(type_tag<PowScalar<M, T>>, double sd, Run&& run) {
  if (sd == 2) return run(PowSquare<M, T>{});
  if (sd == 0.5) return run(Sqrt<M, T>{});
  run(PowScalar<M, T>(sd));
}

// ---- binary --------------------------------------------------------------------------------------------------
template <class M, class T> struct Add {
  REMATCH_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a + b); }
};
template <class M, class T> struct Sub {
  REMATCH_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a - b); }
};
template <class M, class T> struct Mul {
  REMATCH_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a * b); }
};
template <class M, class T> struct Div {
  REMATCH_HOST_DEVICE T operator()(T a, T b) const { return a / b; }
};
// NaN in either input propagates, as in PyTorch: a NaN `a` wins the test, a NaN `b` loses the comparison and is
// returned.
template <class M, class T> struct Maximum {
  REMATCH_HOST_DEVICE T operator()(T a, T b) const { return (a != a || a > b) ? a : b; }
};
template <class M, class T> struct Minimum {
  REMATCH_HOST_DEVICE T operator()(T a, T b) const { return (a != a || a < b) ? a : b; }
};

#define REMATCH_BINARY_BOOL(Name, op)                                           \
  template <class M, class T> struct Name {                                    \
    REMATCH_HOST_DEVICE bool operator()(T a, T b) const { return a op b; }     \
  };
REMATCH_BINARY_BOOL(Eq, ==)
REMATCH_BINARY_BOOL(Ne, !=)
REMATCH_BINARY_BOOL(Lt, <)
REMATCH_BINARY_BOOL(Le, <=)
REMATCH_BINARY_BOOL(Gt, >)
REMATCH_BINARY_BOOL(Ge, >=)
REMATCH_BINARY_BOOL(LogicalAnd, &&)
REMATCH_BINARY_BOOL(LogicalOr, ||)
#undef REMATCH_BINARY_BOOL

}  // namespace rematch::elementwise
