// The CPU loop every elementwise kernel runs on: N operands viewed with element strides over one output shape
// (broadcast inputs have stride 0), dims merged where all operands allow it, the flat index range split
// across OpenMP threads. The kernel body sees one contiguous run of the innermost dim at a time:
// body(ptrs, inner_strides, n), with ptrs[k] pointing at operand k's first element of the run. Bodies
// special-case inner strides of 1 and 0 so the compiler vectorises the common loops.
#pragma once

#include <omp.h>

#include <array>
#include <cstdint>

#include "tensor/tensor_core.h"

namespace rematch::cpu {

// Below this many elements a loop runs on one thread (thread start-up costs more than it saves).
constexpr int64_t kParallelGrain = 32768;

template <size_t N> struct StridedOperands {
  Shape shape;                        // output shape, dims merged
  std::array<Shape, N> strides;       // per operand, in elements
  std::array<char*, N> base;          // per operand, element 0
  std::array<int64_t, N> elem_size;   // bytes
};

// Operands must already have the output's shape (broadcast inputs through kernels::expand first).
template <size_t N> StridedOperands<N> make_operands(const std::array<const Tensor*, N>& ts) {
  StridedOperands<N> ops;
  const Shape& shape = ts[0]->sizes();
  // Drop size-1 dims, then merge dim d into d+1 when every operand is contiguous across the pair.
  Shape sizes;
  std::array<Shape, N> strides;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    sizes.push_back(shape[d]);
    for (size_t k = 0; k < N; ++k) strides[k].push_back(ts[k]->strides()[d]);
  }
  for (size_t k = 0; k < N; ++k) {
    ops.base[k] = static_cast<char*>(ts[k]->raw_data());
    ops.elem_size[k] = static_cast<int64_t>(dtype_size(ts[k]->dtype()));
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!ops.shape.empty()) {
      bool mergeable = true;
      for (size_t k = 0; k < N; ++k)
        mergeable = mergeable && ops.strides[k].back() == strides[k][d] * sizes[d];
      if (mergeable) {
        ops.shape.back() *= sizes[d];
        for (size_t k = 0; k < N; ++k) ops.strides[k].back() = strides[k][d];
        continue;
      }
    }
    ops.shape.push_back(sizes[d]);
    for (size_t k = 0; k < N; ++k) ops.strides[k].push_back(strides[k][d]);
  }
  if (ops.shape.empty()) {  // a single element
    ops.shape.push_back(1);
    for (size_t k = 0; k < N; ++k) ops.strides[k].push_back(1);
  }
  return ops;
}

// Runs body over the flat range [begin, end) of the merged index space.
template <size_t N, typename Body>
void run_range(const StridedOperands<N>& ops, int64_t begin, int64_t end, Body& body) {
  const int64_t nd = static_cast<int64_t>(ops.shape.size());
  const int64_t inner = ops.shape[nd - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = ops.strides[k][nd - 1];
  // Multi-index of `begin`.
  Shape idx(nd, 0);
  int64_t rem = begin;
  for (int64_t d = nd - 1; d >= 0; --d) {
    idx[d] = rem % ops.shape[d];
    rem /= ops.shape[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    std::array<char*, N> ptrs;
    for (size_t k = 0; k < N; ++k) {
      int64_t off = 0;
      for (int64_t d = 0; d < nd; ++d) off += idx[d] * ops.strides[k][d];
      ptrs[k] = ops.base[k] + off * ops.elem_size[k];
    }
    const int64_t n = std::min(inner - idx[nd - 1], end - pos);
    body(ptrs, inner_stride, n);
    pos += n;
    idx[nd - 1] += n;
    for (int64_t d = nd - 1; d > 0 && idx[d] >= ops.shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

template <size_t N, typename Body> void parallel_strided(const StridedOperands<N>& ops, Body body) {
  const int64_t total = shape_numel(ops.shape);
  if (total == 0) return;
  if (total < kParallelGrain || omp_get_max_threads() == 1) {
    run_range(ops, 0, total, body);
    return;
  }
#pragma omp parallel
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    // Chunk boundaries on multiples of 16 elements keep each thread's vector loads aligned alike.
    const int64_t chunk = ((total + nt - 1) / nt + 15) / 16 * 16;
    const int64_t b = std::min(total, t * chunk), e = std::min(total, b + chunk);
    Body local = body;
    if (b < e) run_range(ops, b, e, local);
  }
}

}  // namespace rematch::cpu
