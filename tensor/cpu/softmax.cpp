// CPU fused row ops: softmax, log_softmax, their backwards and the p-norm normalisations. The tensor is
// viewed as [outer, n, inner] around the reduced dim of size n.
//  - inner == 1 (the reduced dim is last): each row is one contiguous run; a few `omp simd` passes per row
//    (max, sum of exp, scale), OpenMP over rows.
//  - otherwise the `inner` positions are independent lanes lying side by side in memory: blocks of up to
//    kLanes lanes go through the same passes together, the loops vectorising across lanes, so a softmax
//    over dim 0 needs no transpose copy.
// float32 uses fast_expf (vectorisable); float64 uses std::exp (it serves references and gradient checks).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "tensor/cpu/fast_exp.h"
#include "tensor/cpu/softmax_kernels.h"
#include "tensor/cpu/strided_loop.h"

namespace rematch::cpu {
namespace {

constexpr int64_t kLanes = 64;

template <typename T> inline T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) return fast_expf(x);
  else return std::exp(x);
}

struct Lanes {
  int64_t outer = 1, n = 1, inner = 1;
};

Lanes lanes_of(const Tensor& x, int64_t dim) {
  Lanes l;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) l.outer *= x.size(d);
    else if (d == dim) l.n = x.size(d);
    else l.inner *= x.size(d);
  }
  return l;
}

// Calls row(offset) for every row when inner == 1, else block(offset, width) for every block of up to
// kLanes lanes (offset: element index of the first lane at position 0 of the reduced dim). OpenMP over
// rows or blocks once the tensor is large enough to pay for starting the threads.
template <typename Row, typename Block> void for_each_row(const Lanes& l, Row row, Block block) {
  const bool parallel = l.outer * l.n * l.inner >= kParallelGrain && omp_get_max_threads() > 1;
  if (l.inner == 1) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < l.outer; ++o) row(o * l.n);
    return;
  }
  const int64_t blocks = (l.inner + kLanes - 1) / kLanes;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t t = 0; t < l.outer * blocks; ++t) {
    const int64_t o = t / blocks, i0 = t % blocks * kLanes;
    block(o * l.n * l.inner + i0, std::min(kLanes, l.inner - i0));
  }
}

// Max-shifted softmax (or log_softmax). NaN in a row makes its sum NaN, hence the whole row NaN; a row of
// all -inf gives NaN (-inf - -inf), as in PyTorch.
template <typename T> void softmax_typed(const Tensor& out, const Tensor& x, const Lanes& l, bool log) {
  const T* xp = x.data<T>();
  T* yp = out.data<T>();
  const int64_t n = l.n, st = l.inner;
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  auto row = [=](int64_t off) {
    const T* xr = xp + off;
    T* yr = yp + off;
    T m = kNegInf;
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < n; ++j) m = xr[j] > m ? xr[j] : m;
    T s = 0;
    if (log) {
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < n; ++j) s += exp_of(xr[j] - m);
      const T lse = m + std::log(s);
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - lse;
    } else {
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < n; ++j) {
        const T e = exp_of(xr[j] - m);
        yr[j] = e;
        s += e;
      }
      const T inv = T(1) / s;
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
    }
  };
  auto block = [=](int64_t off, int64_t w) {
    T m[kLanes], s[kLanes];
    std::fill(m, m + w, kNegInf);
    std::fill(s, s + w, T(0));
    for (int64_t j = 0; j < n; ++j) {
      const T* xr = xp + off + j * st;
      for (int64_t i = 0; i < w; ++i) m[i] = xr[i] > m[i] ? xr[i] : m[i];
    }
    for (int64_t j = 0; j < n; ++j) {
      const T* xr = xp + off + j * st;
      T* yr = yp + off + j * st;
      if (log) {
        for (int64_t i = 0; i < w; ++i) s[i] += exp_of(xr[i] - m[i]);
      } else {
        for (int64_t i = 0; i < w; ++i) {
          yr[i] = exp_of(xr[i] - m[i]);
          s[i] += yr[i];
        }
      }
    }
    for (int64_t i = 0; i < w; ++i) s[i] = log ? m[i] + std::log(s[i]) : T(1) / s[i];
    for (int64_t j = 0; j < n; ++j) {
      const T* xr = xp + off + j * st;
      T* yr = yp + off + j * st;
      if (log) {
        for (int64_t i = 0; i < w; ++i) yr[i] = xr[i] - s[i];
      } else {
        for (int64_t i = 0; i < w; ++i) yr[i] *= s[i];
      }
    }
  };
  for_each_row(l, row, block);
}

// out = map(x, g, c) where c = finish(sum along the row of term(x, g)): the common shape of the softmax
// backwards and the p-norm normalisations (which pass x for g and ignore it).
template <typename T, typename Term, typename Finish, typename Map>
void sum_then_map(const Lanes& l, const T* xp, const T* gp, T* yp, Term term, Finish finish, Map map) {
  const int64_t n = l.n, st = l.inner;
  auto row = [=](int64_t off) {
    const T* xr = xp + off;
    const T* gr = gp + off;
    T* yr = yp + off;
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < n; ++j) s += term(xr[j], gr[j]);
    const T c = finish(s);
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) yr[j] = map(xr[j], gr[j], c);
  };
  auto block = [=](int64_t off, int64_t w) {
    T c[kLanes];
    std::fill(c, c + w, T(0));
    for (int64_t j = 0; j < n; ++j) {
      const T* xr = xp + off + j * st;
      const T* gr = gp + off + j * st;
      for (int64_t i = 0; i < w; ++i) c[i] += term(xr[i], gr[i]);
    }
    for (int64_t i = 0; i < w; ++i) c[i] = finish(c[i]);
    for (int64_t j = 0; j < n; ++j) {
      const T* xr = xp + off + j * st;
      const T* gr = gp + off + j * st;
      T* yr = yp + off + j * st;
      for (int64_t i = 0; i < w; ++i) yr[i] = map(xr[i], gr[i], c[i]);
    }
  };
  for_each_row(l, row, block);
}

}  // namespace

void softmax(const Tensor& out, const Tensor& x, int64_t dim, bool log) {
  const Lanes l = lanes_of(x, dim);
  dispatch_float("softmax", x.dtype(), [&](auto tag) {
    softmax_typed<typename decltype(tag)::type>(out, x, l, log);
  });
}

void softmax_backward(const Tensor& out, const Tensor& grad, const Tensor& y, int64_t dim, bool log) {
  const Lanes l = lanes_of(y, dim);
  dispatch_float("softmax_backward", y.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto same = [](T s) { return s; };
    if (log)  // g - exp(y) * sum(g)
      sum_then_map<T>(l, y.data<T>(), grad.data<T>(), out.data<T>(), [](T, T g) { return g; }, same,
                      [](T yv, T g, T c) { return g - exp_of(yv) * c; });
    else  // y * (g - sum(g * y))
      sum_then_map<T>(l, y.data<T>(), grad.data<T>(), out.data<T>(), [](T yv, T g) { return g * yv; }, same,
                      [](T yv, T g, T c) { return yv * (g - c); });
  });
}

void lp_normalize(const Tensor& out, const Tensor& x, int64_t dim, int p, double eps) {
  const Lanes l = lanes_of(x, dim);
  dispatch_float("lp_normalize", x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T e = static_cast<T>(eps);
    const T* xp = x.data<T>();
    auto scale = [](T v, T, T c) { return v * c; };
    if (p == 1)
      sum_then_map<T>(l, xp, xp, out.data<T>(), [](T v, T) { return std::abs(v); },
                      [e](T s) { return T(1) / (s + e); }, scale);
    else
      sum_then_map<T>(l, xp, xp, out.data<T>(), [](T v, T) { return v * v; },
                      [e](T s) { return T(1) / (std::sqrt(s) + e); }, scale);
  });
}

}  // namespace rematch::cpu
