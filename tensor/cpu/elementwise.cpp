// CPU elementwise kernels: unary, scalar, binary and where, over strided and broadcast views. The ops and their
// math are the table's (tensor/elementwise_ops.h, tensor/elementwise_functors.h); this file runs them in loops.
#include <cmath>

#include "tensor/cpu/cpu_kernels.h"
#include "tensor/cpu/fast_exp.h"
#include "tensor/cpu/strided_loop.h"
#include "tensor/creation.h"
#include "tensor/elementwise_dispatch.h"
#include "tensor/kernels.h"

namespace rematch::cpu {
namespace {

// The CPU's math policy for the functors of tensor/elementwise_functors.h: float32 exp is fast_expf (it
// vectorises), the rest the std:: functions (std::isfinite vectorises as bit tests).
struct CpuMath {
  static float exp(float v) { return fast_expf(v); }
  static double exp(double v) { return std::exp(v); }
  template <typename T> static T log(T v) { return std::log(v); }
  template <typename T> static T log1p(T v) { return std::log1p(v); }
  template <typename T> static T sqrt(T v) { return std::sqrt(v); }
  template <typename T> static T tanh(T v) { return std::tanh(v); }
  template <typename T> static T sin(T v) { return std::sin(v); }
  template <typename T> static T tan(T v) { return std::tan(v); }
  // The re-entrant lgamma (glibc): std::lgamma writes the global signgam, a data race under the parallel loops.
  static float lgamma(float v) {
    int sign = 0;
    return ::lgammaf_r(v, &sign);
  }
  static double lgamma(double v) {
    int sign = 0;
    return ::lgamma_r(v, &sign);
  }
  template <typename T> static T pow(T v, T s) { return std::pow(v, s); }
  template <typename T> static bool is_finite(T v) { return std::isfinite(v); }
};

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

}  // namespace

void unary(kernels::UnaryOp op, const Tensor& out, const Tensor& x) {
  elementwise::unary<CpuMath>(op, x.dtype(), [&](auto out_tag, auto in_tag, auto f) {
    map1<typename decltype(out_tag)::type, typename decltype(in_tag)::type>(out, x, f);
  });
}

void scalar_op(kernels::ScalarOp op, const Tensor& out, const Tensor& x, double s) {
  elementwise::scalar_op<CpuMath>(op, x.dtype(), s, [&](auto out_tag, auto in_tag, auto f) {
    map1<typename decltype(out_tag)::type, typename decltype(in_tag)::type>(out, x, f);
  });
}

void binary(kernels::BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  elementwise::binary<CpuMath>(op, a.dtype(), [&](auto out_tag, auto in_tag, auto f) {
    map2<typename decltype(out_tag)::type, typename decltype(in_tag)::type>(out, a, b, f);
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
