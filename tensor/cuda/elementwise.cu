// CUDA unary, scalar, binary and where kernels over strided and broadcast views (tensor/cuda/strided.cuh runs
// the loops). Each functor is the device twin of one lambda of tensor/cpu/elementwise.cpp and must compute
// the same thing: the same comparisons and casts, NaN going where it goes there, the same dtypes refused with
// the same message. Transcendentals are CUDA's (expf, logf, ... within 1-4 ulp; float32 exp on the CPU is
// fast_expf), so float results agree to a few ulp; sqrt and division are IEEE-rounded on both.
#include <limits>
#include <type_traits>

#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/device_math.cuh"
#include "tensor/cuda/strided.cuh"

namespace rematch::cuda {
namespace {

using kernels::BinaryOp;
using kernels::ScalarOp;
using kernels::UnaryOp;
using strided::launch_elementwise;

using namespace device_math;

// ---- unary ---------------------------------------------------------------------------------------------------
template <typename T> struct Neg {
  __device__ T operator()(T v) const { return static_cast<T>(-v); }
};
// (uint8 is never below zero; its branch only keeps nvcc from warning about the comparison.)
template <typename T> struct Abs {
  __device__ T operator()(T v) const {
    if constexpr (std::is_unsigned_v<T>) return v;
    else return v < T(0) ? static_cast<T>(-v) : v;
  }
};
template <typename T> struct Square {
  __device__ T operator()(T v) const { return static_cast<T>(v * v); }
};
// NaN gives 0: both comparisons fail.
template <typename T> struct Sign {
  __device__ T operator()(T v) const {
    if constexpr (std::is_unsigned_v<T>) return static_cast<T>(T(0) < v);
    else return static_cast<T>((T(0) < v) - (v < T(0)));
  }
};
template <typename T> struct Relu {
  __device__ T operator()(T v) const { return v > T(0) ? v : T(0); }
};
// NaN fails both comparisons, ±inf the bound; integers are always finite.
template <typename T> struct IsFinite {
  __device__ bool operator()(T v) const {
    if constexpr (std::is_floating_point_v<T>) {
      constexpr T kMax = std::numeric_limits<T>::max();
      return v >= -kMax && v <= kMax;
    } else {
      return true;
    }
  }
};
struct LogicalNot {
  __device__ bool operator()(bool v) const { return !v; }
};
template <typename T> struct Exp {
  __device__ T operator()(T v) const { return exp_of(v); }
};
template <typename T> struct Log {
  __device__ T operator()(T v) const { return log_of(v); }
};
template <typename T> struct Log1p {
  __device__ T operator()(T v) const { return log1p_of(v); }
};
template <typename T> struct Sqrt {
  __device__ T operator()(T v) const { return sqrt_of(v); }
};
// A division rather than rsqrt(): the CPU divides, and both round the quotient the same way.
template <typename T> struct Rsqrt {
  __device__ T operator()(T v) const { return T(1) / sqrt_of(v); }
};
template <typename T> struct Reciprocal {
  __device__ T operator()(T v) const { return T(1) / v; }
};
template <typename T> struct Tanh {
  __device__ T operator()(T v) const { return tanh_of(v); }
};
template <typename T> struct Sigmoid {
  __device__ T operator()(T v) const { return T(1) / (T(1) + exp_of(-v)); }
};

template <typename T, typename F> void map_same(const char* name, const Tensor& out, const Tensor& x, F f) {
  launch_elementwise<T, T>(name, out, {&x}, f);
}

template <typename T> void unary_typed(UnaryOp op, const Tensor& out, const Tensor& x) {
  const char* name = kernels::op_name(op);
  switch (op) {
    case UnaryOp::Neg: return map_same<T>(name, out, x, Neg<T>{});
    case UnaryOp::Abs: return map_same<T>(name, out, x, Abs<T>{});
    case UnaryOp::Square: return map_same<T>(name, out, x, Square<T>{});
    case UnaryOp::Sign: return map_same<T>(name, out, x, Sign<T>{});
    case UnaryOp::Relu: return map_same<T>(name, out, x, Relu<T>{});
    case UnaryOp::IsFinite: return launch_elementwise<bool, T>(name, out, {&x}, IsFinite<T>{});
    default: break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case UnaryOp::Exp: return map_same<T>(name, out, x, Exp<T>{});
      case UnaryOp::Log: return map_same<T>(name, out, x, Log<T>{});
      case UnaryOp::Log1p: return map_same<T>(name, out, x, Log1p<T>{});
      case UnaryOp::Sqrt: return map_same<T>(name, out, x, Sqrt<T>{});
      case UnaryOp::Rsqrt: return map_same<T>(name, out, x, Rsqrt<T>{});
      case UnaryOp::Reciprocal: return map_same<T>(name, out, x, Reciprocal<T>{});
      case UnaryOp::Tanh: return map_same<T>(name, out, x, Tanh<T>{});
      case UnaryOp::Sigmoid: return map_same<T>(name, out, x, Sigmoid<T>{});
      default: break;
    }
  }
  REMATCH_FAIL(name, ": dtype ", dtype_name(x.dtype()), " is not supported");
}

// ---- scalar --------------------------------------------------------------------------------------------------
// `s` is the scalar already converted to T on the host (as the CPU converts it); comparisons use the double.
template <typename T> struct AddScalar {
  T s;
  __device__ T operator()(T v) const { return static_cast<T>(v + s); }
};
template <typename T> struct MulScalar {
  T s;
  __device__ T operator()(T v) const { return static_cast<T>(v * s); }
};
template <typename T> struct RSubScalar {
  T s;
  __device__ T operator()(T v) const { return static_cast<T>(s - v); }
};
// NaN in x stays NaN (the comparison fails); a NaN bound leaves x unchanged.
template <typename T> struct ClampMinScalar {
  T s;
  __device__ T operator()(T v) const { return v < s ? s : v; }
};
template <typename T> struct ClampMaxScalar {
  T s;
  __device__ T operator()(T v) const { return v > s ? s : v; }
};
template <typename T> struct RDivScalar {
  T s;
  __device__ T operator()(T v) const { return s / v; }
};
template <typename T> struct LeakyReluScalar {
  T s;
  __device__ T operator()(T v) const { return v > T(0) ? v : v * s; }
};
// pow(x, 2) and pow(x, 0.5) are the exact x*x and sqrt(x), as on the CPU.
template <typename T> struct PowSquare {
  __device__ T operator()(T v) const { return v * v; }
};
template <typename T> struct PowScalar {
  T s;
  __device__ T operator()(T v) const { return pow_of(v, s); }
};
template <typename T, ScalarOp op> struct CompareScalar {
  double s;
  __device__ bool operator()(T v) const {
    const double d = static_cast<double>(v);
    if constexpr (op == ScalarOp::Eq) return d == s;
    else if constexpr (op == ScalarOp::Ne) return d != s;
    else if constexpr (op == ScalarOp::Lt) return d < s;
    else if constexpr (op == ScalarOp::Le) return d <= s;
    else if constexpr (op == ScalarOp::Gt) return d > s;
    else return d >= s;
  }
};

template <typename T> void scalar_typed(ScalarOp op, const Tensor& out, const Tensor& x, double sd) {
  const char* name = kernels::op_name(op);
  const T s = static_cast<T>(sd);
  auto compare = [&](auto f) { launch_elementwise<bool, T>(name, out, {&x}, f); };
  switch (op) {
    case ScalarOp::Add: return map_same<T>(name, out, x, AddScalar<T>{s});
    case ScalarOp::Mul: return map_same<T>(name, out, x, MulScalar<T>{s});
    case ScalarOp::RSub: return map_same<T>(name, out, x, RSubScalar<T>{s});
    case ScalarOp::ClampMin: return map_same<T>(name, out, x, ClampMinScalar<T>{s});
    case ScalarOp::ClampMax: return map_same<T>(name, out, x, ClampMaxScalar<T>{s});
    case ScalarOp::Eq: return compare(CompareScalar<T, ScalarOp::Eq>{sd});
    case ScalarOp::Ne: return compare(CompareScalar<T, ScalarOp::Ne>{sd});
    case ScalarOp::Lt: return compare(CompareScalar<T, ScalarOp::Lt>{sd});
    case ScalarOp::Le: return compare(CompareScalar<T, ScalarOp::Le>{sd});
    case ScalarOp::Gt: return compare(CompareScalar<T, ScalarOp::Gt>{sd});
    case ScalarOp::Ge: return compare(CompareScalar<T, ScalarOp::Ge>{sd});
    default: break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case ScalarOp::RDiv: return map_same<T>(name, out, x, RDivScalar<T>{s});
      case ScalarOp::LeakyRelu: return map_same<T>(name, out, x, LeakyReluScalar<T>{s});
      case ScalarOp::Pow:
        if (sd == 2) return map_same<T>(name, out, x, PowSquare<T>{});
        if (sd == 0.5) return map_same<T>(name, out, x, Sqrt<T>{});
        return map_same<T>(name, out, x, PowScalar<T>{s});
      default: break;
    }
  }
  REMATCH_FAIL(name, ": dtype ", dtype_name(x.dtype()), " is not supported");
}

// ---- binary --------------------------------------------------------------------------------------------------
template <typename T> struct Add {
  __device__ T operator()(T a, T b) const { return static_cast<T>(a + b); }
};
template <typename T> struct Sub {
  __device__ T operator()(T a, T b) const { return static_cast<T>(a - b); }
};
template <typename T> struct Mul {
  __device__ T operator()(T a, T b) const { return static_cast<T>(a * b); }
};
template <typename T> struct Div {
  __device__ T operator()(T a, T b) const { return a / b; }
};
// NaN in either input propagates, as in PyTorch (and the CPU kernel): a NaN `a` wins the test, a NaN `b`
// loses the comparison and is returned.
template <typename T> struct Maximum {
  __device__ T operator()(T a, T b) const { return (a != a || a > b) ? a : b; }
};
template <typename T> struct Minimum {
  __device__ T operator()(T a, T b) const { return (a != a || a < b) ? a : b; }
};
template <typename T, BinaryOp op> struct Compare {
  __device__ bool operator()(T a, T b) const {
    if constexpr (op == BinaryOp::Eq) return a == b;
    else if constexpr (op == BinaryOp::Ne) return a != b;
    else if constexpr (op == BinaryOp::Lt) return a < b;
    else if constexpr (op == BinaryOp::Le) return a <= b;
    else if constexpr (op == BinaryOp::Gt) return a > b;
    else return a >= b;
  }
};
struct LogicalAnd {
  __device__ bool operator()(bool a, bool b) const { return a && b; }
};
struct LogicalOr {
  __device__ bool operator()(bool a, bool b) const { return a || b; }
};

template <typename T>
void binary_typed(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  const char* name = kernels::op_name(op);
  auto same = [&](auto f) { launch_elementwise<T, T, T>(name, out, {&a, &b}, f); };
  auto compare = [&](auto f) { launch_elementwise<bool, T, T>(name, out, {&a, &b}, f); };
  switch (op) {
    case BinaryOp::Add: return same(Add<T>{});
    case BinaryOp::Sub: return same(Sub<T>{});
    case BinaryOp::Mul: return same(Mul<T>{});
    case BinaryOp::Div:
      if constexpr (std::is_integral_v<T>) {
        REMATCH_FAIL("div: integer division is not supported (", dtype_name(a.dtype()),
                     "); cast to a floating dtype first");
      } else {
        return same(Div<T>{});
      }
    case BinaryOp::Maximum: return same(Maximum<T>{});
    case BinaryOp::Minimum: return same(Minimum<T>{});
    case BinaryOp::Eq: return compare(Compare<T, BinaryOp::Eq>{});
    case BinaryOp::Ne: return compare(Compare<T, BinaryOp::Ne>{});
    case BinaryOp::Lt: return compare(Compare<T, BinaryOp::Lt>{});
    case BinaryOp::Le: return compare(Compare<T, BinaryOp::Le>{});
    case BinaryOp::Gt: return compare(Compare<T, BinaryOp::Gt>{});
    case BinaryOp::Ge: return compare(Compare<T, BinaryOp::Ge>{});
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr: break;  // bool inputs, handled by binary() before the numeric dispatch
  }
}

template <typename T> struct Select {
  __device__ T operator()(bool c, T a, T b) const { return c ? a : b; }
};

}  // namespace

void unary(UnaryOp op, const Tensor& out, const Tensor& x) {
  if (op == UnaryOp::LogicalNot) return launch_elementwise<bool, bool>("logical_not", out, {&x}, LogicalNot{});
  dispatch_numeric(kernels::op_name(op), x.dtype(), [&](auto tag) {
    unary_typed<typename decltype(tag)::type>(op, out, x);
  });
}

void scalar_op(ScalarOp op, const Tensor& out, const Tensor& x, double s) {
  dispatch_numeric(kernels::op_name(op), x.dtype(), [&](auto tag) {
    scalar_typed<typename decltype(tag)::type>(op, out, x, s);
  });
}

void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (op == BinaryOp::LogicalAnd)
    return launch_elementwise<bool, bool, bool>("logical_and", out, {&a, &b}, LogicalAnd{});
  if (op == BinaryOp::LogicalOr)
    return launch_elementwise<bool, bool, bool>("logical_or", out, {&a, &b}, LogicalOr{});
  dispatch_numeric(kernels::op_name(op), a.dtype(), [&](auto tag) {
    binary_typed<typename decltype(tag)::type>(op, out, a, b);
  });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, bool, T, T>("where", out, {&cond, &a, &b}, Select<T>{});
  });
}

}  // namespace rematch::cuda
