// CPU sort and top-k along one dim. Each lane (one position of the other dims) is copied into a per-thread
// buffer of (value, index) pairs, ordered, and the first k written out; OpenMP over lanes.
// The order is a strict total order: values first (NaN counts as the largest value, as in PyTorch), then the
// original index. So std::sort is stable without paying for std::stable_sort, and top-k
// (nth_element + sort of the prefix) returns exactly the first k entries of the full stable sort.
#include <omp.h>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensor/cpu/sort_kernels.h"
#include "tensor/cpu/strided_loop.h"

namespace rematch::cpu {
namespace {

template <typename T> bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <typename T> struct Before {
  bool descending;
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    const bool an = is_nan(a.first), bn = is_nan(b.first);
    if (an != bn) return descending ? an : bn;
    if (!an && a.first != b.first) return descending ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  }
};

template <typename T>
void sort_typed(const Tensor& values, const Tensor& indices, const Tensor& x, int64_t dim, bool descending,
                int64_t k) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.size(d);
    if (d > dim) inner *= x.size(d);
  }
  const int64_t n = x.dim() ? x.size(dim) : 1;
  const T* xp = x.data<T>();
  T* vp = values.data<T>();
  int64_t* ip = indices.data<int64_t>();
  const Before<T> before{descending};
  const bool parallel = x.numel() >= kParallelGrain && omp_get_max_threads() > 1;
#pragma omp parallel if (parallel)
  {
    std::vector<std::pair<T, int64_t>> buf(static_cast<size_t>(n));
#pragma omp for schedule(static)
    for (int64_t lane = 0; lane < outer * inner; ++lane) {
      const int64_t o = lane / inner, i = lane % inner;
      const T* src = xp + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) buf[j] = {src[j * inner], j};
      if (k < n) {
        std::nth_element(buf.begin(), buf.begin() + k, buf.end(), before);
        std::sort(buf.begin(), buf.begin() + k, before);
      } else {
        std::sort(buf.begin(), buf.end(), before);
      }
      T* vdst = vp + o * k * inner + i;
      int64_t* idst = ip + o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        vdst[j * inner] = buf[j].first;
        idst[j * inner] = buf[j].second;
      }
    }
  }
}

}  // namespace

void sort(const Tensor& values, const Tensor& indices, const Tensor& x, int64_t dim, bool descending, int64_t k) {
  dispatch_numeric("sort", x.dtype(), [&](auto tag) {
    sort_typed<typename decltype(tag)::type>(values, indices, x, dim, descending, k);
  });
}

}  // namespace rematch::cpu
