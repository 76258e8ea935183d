// CPU index kernels. Every op walks an iteration shape (the index's or the output's) split at `dim` into
// [outer, J, inner]: position (o, j, k) of a tensor lives at outer[o] + j·stride(dim) + inner(k), with the
// offset tables built from that tensor's own strides, so views of any layout need no copy, and an iteration
// shape smaller than the tensor (gather reads only part of x) is fine.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "tensor/cpu/index_kernels.h"
#include "tensor/cpu/strided_loop.h"
#include "tensor/kernels.h"

namespace rematch::cpu {
namespace {

// inner(k) of one operand, small enough to pass by value: a local copy that no store through a data
// pointer can alias, so the compiler keeps it in registers.
struct InnerMap {
  int64_t step;
  const int64_t* table;  // null when the inner dims are one arithmetic run of `step`
};

struct SplitOffsets {
  std::vector<int64_t> outer;
  int64_t dim_stride = 0;
  int64_t inner_step = 1;            // inner(k) = k·inner_step when `inner_table` is empty (the common case)
  std::vector<int64_t> inner_table;
  InnerMap inner() const { return {inner_step, inner_table.empty() ? nullptr : inner_table.data()}; }
};

// Calls f(inner offset of each operand) for k in [k0, k1). The common layouts get loops of their own (all
// operands unit-stride: a plain vectorisable loop; all arithmetic runs), the rest go through the tables.
template <typename F, typename... Maps> inline void inner_loop(int64_t k0, int64_t k1, F f, Maps... m) {
  if (((m.table == nullptr) && ...)) {
    if (((m.step == 1) && ...)) {
      for (int64_t k = k0; k < k1; ++k) f((static_cast<void>(m), k)...);
    } else {
      for (int64_t k = k0; k < k1; ++k) f((k * m.step)...);
    }
  } else {
    for (int64_t k = k0; k < k1; ++k) f((m.table ? m.table[k] : k * m.step)...);
  }
}

// Offsets of every row-major multi-index of shape[begin, end), through `strides`.
std::vector<int64_t> offsets_of(const Shape& shape, const Shape& strides, int64_t begin, int64_t end) {
  std::vector<int64_t> offs{0};
  for (int64_t d = begin; d < end; ++d) {
    std::vector<int64_t> next;
    next.reserve(offs.size() * static_cast<size_t>(shape[d]));
    for (int64_t base : offs)
      for (int64_t i = 0; i < shape[d]; ++i) next.push_back(base + i * strides[d]);
    offs = std::move(next);
  }
  return offs;
}

SplitOffsets split_at(const Tensor& t, const Shape& shape, int64_t dim) {
  const Shape& strides = t.strides();
  const int64_t nd = static_cast<int64_t>(shape.size());
  SplitOffsets s;
  s.outer = offsets_of(shape, strides, 0, dim);
  s.dim_stride = strides[dim];
  // The inner dims are one arithmetic run when each (non-1) dim steps over the whole of the next.
  bool linear = true, first = true;
  int64_t expect = 0;
  for (int64_t d = nd - 1; d > dim; --d) {
    if (shape[d] == 1) continue;
    if (first) {
      s.inner_step = strides[d];
      expect = strides[d] * shape[d];
      first = false;
    } else if (strides[d] == expect) {
      expect *= shape[d];
    } else {
      linear = false;
    }
  }
  if (!linear) s.inner_table = offsets_of(shape, strides, dim + 1, nd);
  return s;
}

// Calls body(o, j0, j1, k0, k1) over [outer] x [J] x [inner] cut into blocks that run in parallel. With
// split_j false every block spans all of J, so each output element of a scatter is owned by one thread and
// its additions happen in increasing j: the result does not depend on the thread count.
template <typename Body>
void for_each_block(int64_t outer, int64_t J, int64_t inner, bool split_j, Body body) {
  const int64_t work = outer * J * inner;
  const int64_t threads = work < kParallelGrain ? 1 : omp_get_max_threads();
  // Blocks per outer row, for about 4 blocks per thread; one thread takes whole rows.
  const int64_t wanted = threads == 1 ? 1 : (4 * threads + outer - 1) / outer;
  const int64_t max_blocks = split_j ? J : std::max<int64_t>(1, inner / 64);
  const int64_t blocks = std::clamp<int64_t>(wanted, 1, std::max<int64_t>(1, max_blocks));
  const int64_t span = split_j ? J : inner;
  const int64_t step = (span + blocks - 1) / blocks;
  const int64_t units = outer * blocks;
#pragma omp parallel for schedule(static) if (threads > 1)
  for (int64_t u = 0; u < units; ++u) {
    const int64_t o = u / blocks, b = u % blocks;
    const int64_t lo = b * step, hi = std::min(span, lo + step);
    if (lo >= hi) continue;
    if (split_j) body(o, lo, hi, int64_t{0}, inner);
    else body(o, int64_t{0}, J, lo, hi);
  }
}

// [outer, J, inner] sizes of `shape` split at dim.
struct Extents {
  int64_t outer = 1, J = 1, inner = 1;
};
Extents extents(const Shape& shape, int64_t dim) {
  Extents e;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim) e.outer *= shape[d];
    else if (d == dim) e.J = shape[d];
    else e.inner *= shape[d];
  }
  return e;
}

}  // namespace

BadIndex find_bad_index(const Tensor& index, int64_t size) {
  BadIndex bad;
  const Tensor flat = kernels::contiguous(index);
  dispatch_index("index", index.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* p = flat.data<I>();
    for (int64_t i = 0; i < flat.numel(); ++i)
      if (p[i] < 0 || p[i] >= size) {
        bad.position = i;
        bad.value = static_cast<int64_t>(p[i]);
        return;
      }
  });
  return bad;
}

void index_select(const Tensor& out, const Tensor& x, int64_t dim, const Tensor& index) {
  const Shape& shape = out.sizes();
  const Extents e = extents(shape, dim);
  const SplitOffsets so = split_at(out, shape, dim), sx = split_at(x, shape, dim);
  const InnerMap mo = so.inner(), mx = sx.inner();
  const int64_t istride = index.strides()[0];
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* po = out.data<T>();
    const T* px = x.data<T>();
    dispatch_index("index_select", index.dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      const I* pi = index.data<I>();
      for_each_block(e.outer, e.J, e.inner, true, [&](int64_t o, int64_t j0, int64_t j1, int64_t k0, int64_t k1) {
        for (int64_t j = j0; j < j1; ++j) {
          T* dst = po + so.outer[o] + j * so.dim_stride;
          const T* src = px + sx.outer[o] + static_cast<int64_t>(pi[j * istride]) * sx.dim_stride;
          inner_loop(k0, k1, [dst, src](int64_t ko, int64_t kx) { dst[ko] = src[kx]; }, mo, mx);
        }
      });
    });
  });
}

void gather(const Tensor& out, const Tensor& x, int64_t dim, const Tensor& index) {
  const Shape& shape = index.sizes();
  const Extents e = extents(shape, dim);
  const SplitOffsets so = split_at(out, shape, dim), sx = split_at(x, shape, dim), si = split_at(index, shape, dim);
  const InnerMap mo = so.inner(), mx = sx.inner(), mi = si.inner();
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* po = out.data<T>();
    const T* px = x.data<T>();
    dispatch_index("gather", index.dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      const I* pi = index.data<I>();
      for_each_block(e.outer, e.J, e.inner, true, [&](int64_t o, int64_t j0, int64_t j1, int64_t k0, int64_t k1) {
        for (int64_t j = j0; j < j1; ++j) {
          T* dst = po + so.outer[o] + j * so.dim_stride;
          const I* idx = pi + si.outer[o] + j * si.dim_stride;
          const T* row = px + sx.outer[o];
          const int64_t step = sx.dim_stride;
          inner_loop(
              k0, k1,
              [dst, idx, row, step](int64_t ko, int64_t kx, int64_t ki) {
                dst[ko] = row[static_cast<int64_t>(idx[ki]) * step + kx];
              },
              mo, mx, mi);
        }
      });
    });
  });
}

void scatter_add_(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  const Shape& shape = index.sizes();
  const Extents e = extents(shape, dim);
  const SplitOffsets so = split_at(out, shape, dim), ss = split_at(src, shape, dim), si = split_at(index, shape, dim);
  const InnerMap mo = so.inner(), ms = ss.inner(), mi = si.inner();
  dispatch_numeric("scatter_add", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* po = out.data<T>();
    const T* ps = src.data<T>();
    dispatch_index("scatter_add", index.dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      const I* pi = index.data<I>();
      for_each_block(e.outer, e.J, e.inner, false, [&](int64_t o, int64_t j0, int64_t j1, int64_t k0, int64_t k1) {
        T* row = po + so.outer[o];
        const int64_t step = so.dim_stride;
        for (int64_t j = j0; j < j1; ++j) {
          const T* from = ps + ss.outer[o] + j * ss.dim_stride;
          const I* idx = pi + si.outer[o] + j * si.dim_stride;
          inner_loop(
              k0, k1,
              [row, from, idx, step](int64_t ko, int64_t ks, int64_t ki) {
                row[static_cast<int64_t>(idx[ki]) * step + ko] += from[ks];
              },
              mo, ms, mi);
        }
      });
    });
  });
}

void index_add_(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  const Shape& shape = src.sizes();
  const Extents e = extents(shape, dim);
  const SplitOffsets so = split_at(out, shape, dim), ss = split_at(src, shape, dim);
  const InnerMap mo = so.inner(), ms = ss.inner();
  const int64_t istride = index.strides()[0];
  dispatch_numeric("index_add", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* po = out.data<T>();
    const T* ps = src.data<T>();
    dispatch_index("index_add", index.dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      const I* pi = index.data<I>();
      for_each_block(e.outer, e.J, e.inner, false, [&](int64_t o, int64_t j0, int64_t j1, int64_t k0, int64_t k1) {
        for (int64_t j = j0; j < j1; ++j) {
          T* dst = po + so.outer[o] + static_cast<int64_t>(pi[j * istride]) * so.dim_stride;
          const T* from = ps + ss.outer[o] + j * ss.dim_stride;
          inner_loop(k0, k1, [dst, from](int64_t ko, int64_t ks) { dst[ko] += from[ks]; }, mo, ms);
        }
      });
    });
  });
}

}  // namespace rematch::cpu
