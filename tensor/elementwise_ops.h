// The elementwise op family, listed once. Everything that names these ops is generated from the three lists
// below: the enums, op_info and the op lists of tensor/kernels.h, the dtype checks of tensor/elementwise.cpp, the
// CPU and CUDA dispatch (tensor/elementwise_dispatch.h, instantiated by tensor/cpu/elementwise.cpp and
// tensor/cuda/elementwise.cu) and the CPU/CUDA parity tests (tests/tensor/cuda_elementwise_test.cpp).
//
// A row is X(Op, "name", Accepts, Result, Functor):
//   Op       the kernels::UnaryOp / ScalarOp / BinaryOp enumerator (the rows are in the enums' order);
//   "name"   what errors call the op;
//   Accepts  the input dtypes (kernels::Accepts below); every other dtype is refused with the same message on
//            every device;
//   Result   Same: the input's dtype; Bool: bool;
//   Functor  the math: a `template <class Math, class T>` functor of tensor/elementwise_functors.h, compiled by
//            g++ for the CPU and by nvcc for CUDA. Math is the backend's policy for the transcendental functions
//            (float32 exp is fast_expf on the CPU, CUDA's expf on the GPU); everything else is one code.
// A scalar op's functor is built from the scalar s: converted to the element type first, except for the
// comparisons, which compare the element converted to double with s.
//
// A new op is a row here and its functor (docs/design.md §8.1). The dispatch switches have no `default` and
// are compiled with -Werror=switch (CMakeLists.txt): an enumerator without its case does not compile.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

// clang-format off
#define REMATCH_UNARY_OPS(X)                                   \
  X(Neg,        "neg",         Numeric,  Same, Neg)            \
  X(Abs,        "abs",         Numeric,  Same, Abs)            \
  X(Exp,        "exp",         Floating, Same, Exp)            \
  X(Log,        "log",         Floating, Same, Log)            \
  X(Log1p,      "log1p",       Floating, Same, Log1p)          \
  X(Sqrt,       "sqrt",        Floating, Same, Sqrt)           \
  X(Rsqrt,      "rsqrt",       Floating, Same, Rsqrt)          \
  X(Square,     "square",      Numeric,  Same, Square)         \
  X(Reciprocal, "reciprocal",  Floating, Same, Reciprocal)     \
  X(Tanh,       "tanh",        Floating, Same, Tanh)           \
  X(Sigmoid,    "sigmoid",     Floating, Same, Sigmoid)        \
  X(Relu,       "relu",        Numeric,  Same, Relu)           \
  X(Sign,       "sign",        Numeric,  Same, Sign)           \
  X(LogicalNot, "logical_not", Bool,     Bool, LogicalNot)     \
  X(IsFinite,   "isfinite",    Numeric,  Bool, IsFinite)       /* false for NaN and ±inf */ \
  X(Lgamma,     "lgamma",      Floating, Same, Lgamma)         /* log|Γ(x)| */ \
  X(Digamma,    "digamma",     Floating, Same, Digamma)        /* ψ(x) = d log Γ(x)/dx */ \
  X(Trigamma,   "trigamma",    Floating, Same, Trigamma)       /* ψ'(x), digamma's derivative */

// Ops with one scalar parameter s.
#define REMATCH_SCALAR_OPS(X)                                  \
  X(Add,       "add",        Numeric,  Same, AddScalar)        \
  X(Mul,       "mul",        Numeric,  Same, MulScalar)        \
  X(Pow,       "pow",        Floating, Same, PowScalar)        \
  X(LeakyRelu, "leaky_relu", Floating, Same, LeakyReluScalar)  \
  X(ClampMin,  "clamp_min",  Numeric,  Same, ClampMinScalar)   \
  X(ClampMax,  "clamp_max",  Numeric,  Same, ClampMaxScalar)   \
  X(RSub,      "rsub",       Numeric,  Same, RSubScalar)       /* s - x */ \
  X(RDiv,      "rdiv",       Floating, Same, RDivScalar)       /* s / x */ \
  X(Polygamma, "polygamma",  Floating, Same, PolygammaScalar)  /* ψ^(s)(x), the order s = 0, 1, 2, ... */ \
  X(Eq,        "eq",         Numeric,  Bool, EqScalar)         \
  X(Ne,        "ne",         Numeric,  Bool, NeScalar)         \
  X(Lt,        "lt",         Numeric,  Bool, LtScalar)         \
  X(Le,        "le",         Numeric,  Bool, LeScalar)         \
  X(Gt,        "gt",         Numeric,  Bool, GtScalar)         \
  X(Ge,        "ge",         Numeric,  Bool, GeScalar)

// Both inputs of one dtype (and device), broadcast like NumPy.
#define REMATCH_BINARY_OPS(X)                                  \
  X(Add,        "add",         Numeric,  Same, Add)            \
  X(Sub,        "sub",         Numeric,  Same, Sub)            \
  X(Mul,        "mul",         Numeric,  Same, Mul)            \
  X(Div,        "div",         Division, Same, Div)            \
  X(Maximum,    "maximum",     Numeric,  Same, Maximum)        \
  X(Minimum,    "minimum",     Numeric,  Same, Minimum)        \
  X(Eq,         "eq",          Numeric,  Bool, Eq)             \
  X(Ne,         "ne",          Numeric,  Bool, Ne)             \
  X(Lt,         "lt",          Numeric,  Bool, Lt)             \
  X(Le,         "le",          Numeric,  Bool, Le)             \
  X(Gt,         "gt",          Numeric,  Bool, Gt)             \
  X(Ge,         "ge",          Numeric,  Bool, Ge)             \
  X(LogicalAnd, "logical_and", Bool,     Bool, LogicalAnd)     \
  X(LogicalOr,  "logical_or",  Bool,     Bool, LogicalOr)
// clang-format on

namespace rematch::kernels {

// The input dtypes of an op, and the refusal of the others (the same message on every device):
//   Numeric   every dtype but bool; bool is refused as
//             "<op>: dtype bool is not supported (expected a numeric dtype (not bool))"
//   Floating  float32 and float64; bool as for Numeric, an integer as "<op>: dtype int32 is not supported"
//   Division  as Floating, but an integer is refused as
//             "<op>: integer division is not supported (int32); cast to a floating dtype first"
//   Bool      bool only: "<op>: expected a bool tensor, got ..." (unary) or "expected bool tensors" (binary).
// Bool is checked before anything else, even for an empty tensor; the others only when there is something to
// compute (an empty input gives an empty result).
enum class Accepts : uint8_t { Numeric, Floating, Division, Bool };
enum class Result : uint8_t { Same, Bool };

constexpr bool accepts_dtype(Accepts a, DType t) {
  switch (a) {
    case Accepts::Numeric: return t != DType::Bool;
    case Accepts::Floating:
    case Accepts::Division: return is_floating(t);
    case Accepts::Bool: return t == DType::Bool;
  }
  return false;
}

}  // namespace rematch::kernels
