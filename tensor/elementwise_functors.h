// The math of the elementwise ops of tensor/elementwise_ops.h, written once for both backends: this header is
// compiled by g++ (tensor/cpu/elementwise.cpp) and by nvcc (tensor/cuda/elementwise.cu). Each functor is a
// `template <class Math, class T>`, instantiated only for the dtypes its row accepts; Math is the backend's
// policy: static members exp, log, log1p, sqrt, tanh, pow and is_finite for float and double (the CPU's, in
// tensor/cpu/elementwise.cpp: fast_expf for float32 exp, std:: otherwise; CUDA's, in tensor/cuda/elementwise.cu:
// tensor/cuda/device_math.cuh, and is_finite as two comparisons).
// Everything else (comparisons, casts, NaN handling) is this one code on both devices, so integer and bool
// results agree exactly and float results differ only by the backends' transcendentals; sqrt and division are
// IEEE-rounded on both.
#pragma once

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

// ---- scalar --------------------------------------------------------------------------------------------------
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
