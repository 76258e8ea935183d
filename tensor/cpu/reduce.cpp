// Sum/Mean/Max/Min loops. Float sums run blocks of 1024 in the working type with simd partial sums (fast,
// vectorised) and add the block totals in double, which keeps a 16M-element sum accurate to a few ulp.
#include <omp.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "tensor/cpu/reduce_kernels.h"
#include "tensor/cpu/strided_loop.h"

namespace rematch::cpu {
namespace {

using kernels::ReduceOp;

template <typename T> using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
// What the adds run in: floats in their own type within a block (vectorised), block totals in double; integers
// in uint64_t throughout, where wrap-around is defined, so every integer sum is exact modulo 2^64 (exact when it
// fits int64; an int32 output wraps as the CUDA path does).
template <typename T> using Lane = std::conditional_t<std::is_floating_point_v<T>, T, uint64_t>;
template <typename T> using Wide = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

// Four independent vector accumulators (kLanes values), so the adds are not one latency-bound chain.
template <typename T> Wide<T> sum_block(const T* p, int64_t n) {
  constexpr int64_t kLanes = 64 / sizeof(T) * 4;
  Lane<T> acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) acc[j] += static_cast<Lane<T>>(p[i + j]);
  Lane<T> total = 0;
  for (int64_t j = 0; j < kLanes; ++j) total += acc[j];
  for (; i < n; ++i) total += static_cast<Lane<T>>(p[i]);
  return static_cast<Wide<T>>(total);
}

template <typename T> Wide<T> sum_contiguous_wide(const T* p, int64_t n) {
  constexpr int64_t kBlock = 1024;
  Wide<T> total = 0;
  for (int64_t b = 0; b < n; b += kBlock) total += sum_block(p + b, std::min(kBlock, n - b));
  return total;
}

template <typename T> Acc<T> sum_contiguous(const T* p, int64_t n) {
  return static_cast<Acc<T>>(sum_contiguous_wide(p, n));
}

// NaN wins, as in PyTorch's max/min.
template <typename T, bool kMax> inline T pick(T acc, T v) {
  if constexpr (kMax) return (v > acc || v != v) ? v : acc;
  else return (v < acc || v != v) ? v : acc;
}

template <typename T, bool kMax> T extreme_contiguous(const T* p, int64_t n) {
  T acc = p[0];
  for (int64_t i = 1; i < n; ++i) acc = pick<T, kMax>(acc, p[i]);
  return acc;
}

template <typename T> T row_value(ReduceOp op, const T* p, int64_t n) {
  switch (op) {
    case ReduceOp::Sum: return static_cast<T>(sum_contiguous(p, n));
    case ReduceOp::Mean: return static_cast<T>(static_cast<double>(sum_contiguous(p, n)) / static_cast<double>(n));
    case ReduceOp::Max: return extreme_contiguous<T, true>(p, n);
    case ReduceOp::Min: return extreme_contiguous<T, false>(p, n);
  }
  return T(0);
}

// One long row split over threads. A sum takes each block of 1024 as sum_contiguous_wide does and adds the
// block totals in their order, as one thread would: the same bits at any thread count. (Partial sums per
// thread, added at the end, would group the additions by the thread count.) Max and min are exact anyway.
template <typename T> T long_row_value(ReduceOp op, const T* p, int64_t n) {
  constexpr int64_t kBlock = 1024;
  if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    std::vector<Wide<T>> partial(static_cast<size_t>(blocks), 0);
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; ++b)
      partial[static_cast<size_t>(b)] = sum_block(p + b * kBlock, std::min(kBlock, n - b * kBlock));
    Wide<T> wide = 0;
    for (Wide<T> v : partial) wide += v;
    const Acc<T> total = static_cast<Acc<T>>(wide);
    // (not one ?: expression: its common type with the double would send integer sums through double)
    if (op == ReduceOp::Mean) return static_cast<T>(static_cast<double>(total) / static_cast<double>(n));
    return static_cast<T>(total);
  }
  const int nt = omp_get_max_threads();
  std::vector<T> extreme(static_cast<size_t>(nt), p[0]);
  const int64_t chunk = ((n + nt - 1) / nt + kBlock - 1) / kBlock * kBlock;
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    const int64_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    if (b < e) extreme[t] = row_value(op, p + b, e - b);
  }
  T acc = extreme[0];
  for (T v : extreme) acc = op == ReduceOp::Max ? pick<T, true>(acc, v) : pick<T, false>(acc, v);
  return acc;
}

// [outer, R, inner] with inner > 1: walk the R rows of each outer slice, combining whole inner rows.
template <typename T>
void reduce_middle(ReduceOp op, T* out, const T* x, int64_t outer, int64_t R, int64_t inner) {
#pragma omp parallel for if (outer * R * inner >= kParallelGrain) schedule(static)
  for (int64_t o = 0; o < outer; ++o) {
    T* dst = out + o * inner;
    const T* src = x + o * R * inner;
    if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
      // Blocks of rows summed in Lane<T> (vectorised), block totals in Wide<T>.
      std::vector<Wide<T>> acc(static_cast<size_t>(inner), 0);
      std::vector<Lane<T>> block(static_cast<size_t>(inner));
      for (int64_t r0 = 0; r0 < R; r0 += 64) {
        std::fill(block.begin(), block.end(), Lane<T>(0));
        for (int64_t r = r0; r < std::min(R, r0 + 64); ++r) {
          const T* row = src + r * inner;
#pragma omp simd
          for (int64_t i = 0; i < inner; ++i) block[i] += static_cast<Lane<T>>(row[i]);
        }
        for (int64_t i = 0; i < inner; ++i) acc[i] += static_cast<Wide<T>>(block[i]);
      }
      const double scale = op == ReduceOp::Mean ? 1.0 / static_cast<double>(R) : 1.0;
      for (int64_t i = 0; i < inner; ++i) {
        const Acc<T> total = static_cast<Acc<T>>(acc[i]);
        dst[i] = op == ReduceOp::Mean ? static_cast<T>(static_cast<double>(total) * scale) : static_cast<T>(total);
      }
    } else {
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i];
      for (int64_t r = 1; r < R; ++r) {
        const T* row = src + r * inner;
        if (op == ReduceOp::Max)
          for (int64_t i = 0; i < inner; ++i) dst[i] = pick<T, true>(dst[i], row[i]);
        else
          for (int64_t i = 0; i < inner; ++i) dst[i] = pick<T, false>(dst[i], row[i]);
      }
    }
  }
}

}  // namespace

void reduce(ReduceOp op, const Tensor& out, const Tensor& x, int64_t outer, int64_t R, int64_t inner) {
  dispatch_numeric("reduce", x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const T* p = x.data<T>();
    if (inner > 1) return reduce_middle(op, o, p, outer, R, inner);
    if (outer == 1 && R >= kParallelGrain) {
      o[0] = long_row_value(op, p, R);
      return;
    }
#pragma omp parallel for if (outer * R >= kParallelGrain) schedule(static)
    for (int64_t r = 0; r < outer; ++r) o[r] = row_value(op, p + r * R, R);
  });
}

void reduce_with_index(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& x, int64_t rows,
                       int64_t R) {
  dispatch_numeric("max/min", x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* v = values.data<T>();
    int64_t* idx = indices.data<int64_t>();
    const T* p = x.data<T>();
    const bool is_max = op == ReduceOp::Max;
#pragma omp parallel for if (rows * R >= kParallelGrain) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = p + r * R;
      int64_t best = 0;
      for (int64_t i = 1; i < R; ++i) {
        const T a = row[best], b = row[i];
        if (a != a) break;  // the first NaN is the answer
        if (b != b || (is_max ? b > a : b < a)) best = i;
      }
      v[r] = row[best];
      idx[r] = best;
    }
  });
}

}  // namespace rematch::cpu
