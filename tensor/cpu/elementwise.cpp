// CPU elementwise kernels: unary, scalar, binary and where, over strided and broadcast views.
#include <cmath>
#include <type_traits>

#include "tensor/cpu/cpu_kernels.h"
#include "tensor/cpu/fast_exp.h"
#include "tensor/cpu/strided_loop.h"
#include "tensor/creation.h"
#include "tensor/kernels.h"

namespace rematch::cpu {
namespace {

template <typename T> inline T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) return fast_expf(x);
  else return std::exp(x);
}

// out = f(a) over two operands [out, a].
template <typename TO, typename TA, typename F> void map1(const Tensor& out, const Tensor& a, F f) {
  auto ops = make_operands<2>({&out, &a});
  parallel_strided(ops, [f](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t n) {
    TO* o = reinterpret_cast<TO*>(p[0]);
    const TA* x = reinterpret_cast<const TA*>(p[1]);
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
    } else if (s[0] == 1 && s[1] == 0) {
      const TO v = f(x[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = v;
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]]);
    }
  });
}

// out = f(a, b) over three operands [out, a, b].
template <typename TO, typename TA, typename F>
void map2(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  auto ops = make_operands<3>({&out, &a, &b});
  parallel_strided(ops, [f](std::array<char*, 3> p, std::array<int64_t, 3> s, int64_t n) {
    TO* o = reinterpret_cast<TO*>(p[0]);
    const TA* x = reinterpret_cast<const TA*>(p[1]);
    const TA* y = reinterpret_cast<const TA*>(p[2]);
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
      const TA yv = y[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
    } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
      const TA xv = x[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]], y[i * s[2]]);
    }
  });
}

template <typename T> void unary_typed(kernels::UnaryOp op, const Tensor& out, const Tensor& x) {
  using kernels::UnaryOp;
  constexpr bool fp = std::is_floating_point_v<T>;
  switch (op) {
    case UnaryOp::Neg: return map1<T, T>(out, x, [](T v) { return static_cast<T>(-v); });
    case UnaryOp::Abs: return map1<T, T>(out, x, [](T v) { return v < T(0) ? static_cast<T>(-v) : v; });
    case UnaryOp::Square: return map1<T, T>(out, x, [](T v) { return static_cast<T>(v * v); });
    case UnaryOp::Sign:
      return map1<T, T>(out, x, [](T v) { return static_cast<T>((T(0) < v) - (v < T(0))); });
    case UnaryOp::Relu: return map1<T, T>(out, x, [](T v) { return v > T(0) ? v : T(0); });
    case UnaryOp::IsFinite:
      return map1<bool, T>(out, x, [](T v) {
        if constexpr (fp) return std::isfinite(v);
        else return true;
      });
    default: break;
  }
  if constexpr (fp) {
    switch (op) {
      case UnaryOp::Exp: return map1<T, T>(out, x, [](T v) { return exp_of(v); });
      case UnaryOp::Log: return map1<T, T>(out, x, [](T v) { return std::log(v); });
      case UnaryOp::Log1p: return map1<T, T>(out, x, [](T v) { return std::log1p(v); });
      case UnaryOp::Sqrt: return map1<T, T>(out, x, [](T v) { return std::sqrt(v); });
      case UnaryOp::Rsqrt: return map1<T, T>(out, x, [](T v) { return T(1) / std::sqrt(v); });
      case UnaryOp::Reciprocal: return map1<T, T>(out, x, [](T v) { return T(1) / v; });
      case UnaryOp::Tanh: return map1<T, T>(out, x, [](T v) { return std::tanh(v); });
      case UnaryOp::Sigmoid: return map1<T, T>(out, x, [](T v) { return T(1) / (T(1) + exp_of(-v)); });
      default: break;
    }
  }
  REMATCH_FAIL(kernels::op_name(op), ": dtype ", dtype_name(x.dtype()), " is not supported");
}

template <typename T> void scalar_typed(kernels::ScalarOp op, const Tensor& out, const Tensor& x, double sd) {
  using kernels::ScalarOp;
  const T s = static_cast<T>(sd);
  switch (op) {
    case ScalarOp::Add: return map1<T, T>(out, x, [s](T v) { return static_cast<T>(v + s); });
    case ScalarOp::Mul: return map1<T, T>(out, x, [s](T v) { return static_cast<T>(v * s); });
    case ScalarOp::RSub: return map1<T, T>(out, x, [s](T v) { return static_cast<T>(s - v); });
    case ScalarOp::ClampMin: return map1<T, T>(out, x, [s](T v) { return v < s ? s : v; });
    case ScalarOp::ClampMax: return map1<T, T>(out, x, [s](T v) { return v > s ? s : v; });
    case ScalarOp::Eq: return map1<bool, T>(out, x, [sd](T v) { return static_cast<double>(v) == sd; });
    case ScalarOp::Ne: return map1<bool, T>(out, x, [sd](T v) { return static_cast<double>(v) != sd; });
    case ScalarOp::Lt: return map1<bool, T>(out, x, [sd](T v) { return static_cast<double>(v) < sd; });
    case ScalarOp::Le: return map1<bool, T>(out, x, [sd](T v) { return static_cast<double>(v) <= sd; });
    case ScalarOp::Gt: return map1<bool, T>(out, x, [sd](T v) { return static_cast<double>(v) > sd; });
    case ScalarOp::Ge: return map1<bool, T>(out, x, [sd](T v) { return static_cast<double>(v) >= sd; });
    default: break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case ScalarOp::RDiv: return map1<T, T>(out, x, [s](T v) { return s / v; });
      case ScalarOp::LeakyRelu: return map1<T, T>(out, x, [s](T v) { return v > T(0) ? v : v * s; });
      case ScalarOp::Pow:
        if (sd == 2) return map1<T, T>(out, x, [](T v) { return v * v; });
        if (sd == 0.5) return map1<T, T>(out, x, [](T v) { return std::sqrt(v); });
        return map1<T, T>(out, x, [s](T v) { return std::pow(v, s); });
      default: break;
    }
  }
  REMATCH_FAIL(kernels::op_name(op), ": dtype ", dtype_name(x.dtype()), " is not supported");
}

template <typename T>
void binary_typed(kernels::BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  using kernels::BinaryOp;
  switch (op) {
    case BinaryOp::Add: return map2<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x + y); });
    case BinaryOp::Sub: return map2<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x - y); });
    case BinaryOp::Mul: return map2<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x * y); });
    case BinaryOp::Div:
      if constexpr (std::is_integral_v<T>) {
        REMATCH_FAIL("div: integer division is not supported (", dtype_name(a.dtype()),
                     "); cast to a floating dtype first");
      } else {
        return map2<T, T>(out, a, b, [](T x, T y) { return x / y; });
      }
    // NaN propagates through maximum/minimum, as in PyTorch.
    case BinaryOp::Maximum:
      return map2<T, T>(out, a, b, [](T x, T y) { return (x != x || x > y) ? x : y; });
    case BinaryOp::Minimum:
      return map2<T, T>(out, a, b, [](T x, T y) { return (x != x || x < y) ? x : y; });
    case BinaryOp::Eq: return map2<bool, T>(out, a, b, [](T x, T y) { return x == y; });
    case BinaryOp::Ne: return map2<bool, T>(out, a, b, [](T x, T y) { return x != y; });
    case BinaryOp::Lt: return map2<bool, T>(out, a, b, [](T x, T y) { return x < y; });
    case BinaryOp::Le: return map2<bool, T>(out, a, b, [](T x, T y) { return x <= y; });
    case BinaryOp::Gt: return map2<bool, T>(out, a, b, [](T x, T y) { return x > y; });
    case BinaryOp::Ge: return map2<bool, T>(out, a, b, [](T x, T y) { return x >= y; });
    case BinaryOp::LogicalAnd: return map2<bool, T>(out, a, b, [](T x, T y) { return x && y; });
    case BinaryOp::LogicalOr: return map2<bool, T>(out, a, b, [](T x, T y) { return x || y; });
  }
}

}  // namespace

void unary(kernels::UnaryOp op, const Tensor& out, const Tensor& x) {
  if (op == kernels::UnaryOp::LogicalNot) {
    return map1<bool, bool>(out, x, [](bool v) { return !v; });
  }
  dispatch_numeric(kernels::op_name(op), x.dtype(), [&](auto tag) {
    unary_typed<typename decltype(tag)::type>(op, out, x);
  });
}

void scalar_op(kernels::ScalarOp op, const Tensor& out, const Tensor& x, double s) {
  dispatch_numeric(kernels::op_name(op), x.dtype(), [&](auto tag) {
    scalar_typed<typename decltype(tag)::type>(op, out, x, s);
  });
}

void binary(kernels::BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (op == kernels::BinaryOp::LogicalAnd || op == kernels::BinaryOp::LogicalOr) {
    return binary_typed<bool>(op, out, a, b);
  }
  dispatch_numeric(kernels::op_name(op), a.dtype(), [&](auto tag) {
    binary_typed<typename decltype(tag)::type>(op, out, a, b);
  });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  auto ops = make_operands<4>({&out, &cond, &a, &b});
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_strided(ops, [](std::array<char*, 4> p, std::array<int64_t, 4> s, int64_t n) {
      T* o = reinterpret_cast<T*>(p[0]);
      const bool* c = reinterpret_cast<const bool*>(p[1]);
      const T* x = reinterpret_cast<const T*>(p[2]);
      const T* y = reinterpret_cast<const T*>(p[3]);
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = c[i * s[1]] ? x[i * s[2]] : y[i * s[3]];
    });
  });
}

void fill(const Tensor& out, double value) {
  auto ops = make_operands<1>({&out});
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = static_cast<T>(value);
    parallel_strided(ops, [v](std::array<char*, 1> p, std::array<int64_t, 1> s, int64_t n) {
      T* o = reinterpret_cast<T*>(p[0]);
      if (s[0] == 1) {
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) o[i * s[0]] = v;
      }
    });
  });
}

void copy(const Tensor& dst, const Tensor& src) {
  dispatch_all(dst.dtype(), [&](auto dtag) {
    using TD = typename decltype(dtag)::type;
    dispatch_all(src.dtype(), [&](auto stag) {
      using TS = typename decltype(stag)::type;
      map1<TD, TS>(dst, src, [](TS v) { return static_cast<TD>(v); });
    });
  });
}

}  // namespace rematch::cpu
