// CUDA index kernels, the counterparts of tensor/cpu/index.cpp. Every kernel walks an iteration shape (the
// output's, the index's or src's) one element per thread, and maps each row-major position to the offsets of
// its operands through their own strides (OffsetMap), so views of any layout need no copy.
//
// The scatters (scatter_add_, index_add_) must give the CPU's result bit for bit, which means adding repeated
// destinations in increasing source order, starting from out's value. Floating-point atomics would add them
// in whatever order threads arrive, so instead each source element becomes a (destination offset, source
// offset) pair, listed in row-major source order, and the pairs are radix-sorted by destination. The sort is
// stable, so each destination's run keeps its sources in increasing order along dim (the other coordinates of
// a destination fix those of its sources). One thread then owns each run and adds it up serially: no two
// threads touch one destination, and the order is the CPU's.
#include <climits>
#include <cstdint>
#include <utility>

#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/kernel_support.cuh"

namespace rematch::cuda {

using namespace kernel_support;

namespace {

template <typename I>
__global__ void find_bad_index_kernel(const I* index, OffsetMap<1> map, int64_t n, int64_t size,
                                      unsigned long long* first) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += step) {
    int64_t off[1];
    map.locate(p, off);
    const int64_t v = static_cast<int64_t>(index[off[0]]);
    if (v < 0 || v >= size) atomicMin(first, static_cast<unsigned long long>(p));
  }
}

// map operands: out, x (x through the index).
template <typename T, typename I>
__global__ void index_select_kernel(T* out, const T* x, const I* index, int64_t index_stride, int64_t x_dim_stride,
                                    OffsetMap<2> map, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += step) {
    int64_t off[2];
    const int64_t j = map.locate(p, off);
    out[off[0]] = x[off[1] + static_cast<int64_t>(index[j * index_stride]) * x_dim_stride];
  }
}

// map operands: out, index, x (x through the index).
template <typename T, typename I>
__global__ void gather_kernel(T* out, const T* x, const I* index, int64_t x_dim_stride, OffsetMap<3> map,
                              int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += step) {
    int64_t off[3];
    map.locate(p, off);
    out[off[0]] = x[off[2] + static_cast<int64_t>(index[off[1]]) * x_dim_stride];
  }
}

// scatter_add pairs over index's shape; map operands: index, src, out (out through the index).
template <typename I>
__global__ void scatter_pairs_kernel(uint64_t* dst, int64_t* from, const I* index, int64_t out_dim_stride,
                                     OffsetMap<3> map, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += step) {
    int64_t off[3];
    map.locate(p, off);
    dst[p] = static_cast<uint64_t>(off[2] + static_cast<int64_t>(index[off[0]]) * out_dim_stride);
    from[p] = off[1];
  }
}

// index_add pairs over src's shape; map operands: src, out (out through the index).
template <typename I>
__global__ void index_add_pairs_kernel(uint64_t* dst, int64_t* from, const I* index, int64_t index_stride,
                                       int64_t out_dim_stride, OffsetMap<2> map, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += step) {
    int64_t off[2];
    const int64_t j = map.locate(p, off);
    dst[p] = static_cast<uint64_t>(off[1] + static_cast<int64_t>(index[j * index_stride]) * out_dim_stride);
    from[p] = off[0];
  }
}

// dst/from sorted by destination; the first pair of each run adds the whole run into out, in order.
template <typename T>
__global__ void add_runs_kernel(T* out, const T* src, const uint64_t* dst, const int64_t* from, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const uint64_t d = dst[i];
    if (i > 0 && dst[i - 1] == d) continue;
    T acc = out[d];
    for (int64_t q = i; q < n && dst[q] == d; ++q) acc += src[from[q]];
    out[d] = acc;
  }
}

// Largest element offset of t: sum over dims of (size - 1) * stride (t non-empty, strides non-negative).
int64_t max_offset(const Tensor& t) {
  int64_t m = 0;
  for (int64_t d = 0; d < t.dim(); ++d) m += (t.sizes()[d] - 1) * t.strides()[d];
  return m;
}

// Sorts the n (destination, source) pairs by destination and adds each run into out (see the file comment).
template <typename T>
void add_sorted_runs(const Tensor& out, const Tensor& src, DeviceBuffer& dst, DeviceBuffer& from, int64_t n) {
  const int device = out.device().index;
  DeviceBuffer dst_sorted(static_cast<size_t>(n) * sizeof(uint64_t), device);
  DeviceBuffer from_sorted(static_cast<size_t>(n) * sizeof(int64_t), device);
  stable_sort_pairs(dst.as<uint64_t>(), dst_sorted.as<uint64_t>(), from.as<int64_t>(), from_sorted.as<int64_t>(),
                    n, bits_for(static_cast<uint64_t>(max_offset(out))), device);
  add_runs_kernel<<<blocks_for(n), kThreads, 0, stream(device)>>>(
      static_cast<T*>(out.raw_data()), static_cast<const T*>(src.raw_data()), dst_sorted.as<uint64_t>(),
      from_sorted.as<int64_t>(), n);
  REMATCH_CUDA_LAUNCH_CHECK("add_runs");
}

}  // namespace

std::pair<int64_t, int64_t> find_bad_index(const Tensor& index, int64_t size) {
  const int64_t n = index.numel();
  if (n == 0) return {-1, 0};
  const int device = index.device().index;
  cudaStream_t s = stream(device);
  const Tensor* ops[1] = {&index};
  const bool through[1] = {false};
  const OffsetMap<1> map = offset_map<1>("index check", index.sizes(), 0, ops, through);
  DeviceBuffer first(sizeof(unsigned long long), device);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  REMATCH_CUDA_CHECK(cudaMemsetAsync(first.ptr, 0xff, sizeof(unsigned long long), s));  // "none found"
  dispatch_index("index check", index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    find_bad_index_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const I*>(index.raw_data()), map, n, size,
                                                             first.as<unsigned long long>());
  });
  REMATCH_CUDA_LAUNCH_CHECK("find_bad_index");
  unsigned long long position = 0;
  memcpy(&position, Device::cpu(), first.ptr, index.device(), sizeof(position));  // synchronises
  if (position == ULLONG_MAX) return {-1, 0};
  // The offending value: one element read back from the offset of that row-major position.
  int64_t rest = static_cast<int64_t>(position), offset = 0;
  for (int64_t d = index.dim() - 1; d >= 0; --d) {
    offset += (rest % index.sizes()[d]) * index.strides()[d];
    rest /= index.sizes()[d];
  }
  const size_t esize = dtype_size(index.dtype());
  const char* at = static_cast<const char*>(index.raw_data()) + offset * static_cast<int64_t>(esize);
  int64_t value = 0;
  if (index.dtype() == DType::Int32) {
    int32_t v = 0;
    memcpy(&v, Device::cpu(), at, index.device(), esize);
    value = v;
  } else {
    memcpy(&value, Device::cpu(), at, index.device(), esize);
  }
  return {static_cast<int64_t>(position), value};
}

void index_select(const Tensor& out, const Tensor& x, int64_t dim, const Tensor& index) {
  const int64_t n = out.numel();
  const int device = out.device().index;
  const Tensor* ops[2] = {&out, &x};
  const bool through[2] = {false, true};
  const OffsetMap<2> map = offset_map<2>("index_select", out.sizes(), dim, ops, through);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch_index("index_select", index.dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      index_select_kernel<<<blocks_for(n), kThreads, 0, stream(device)>>>(
          static_cast<T*>(out.raw_data()), static_cast<const T*>(x.raw_data()),
          static_cast<const I*>(index.raw_data()), index.strides()[0], x.strides()[dim], map, n);
    });
  });
  REMATCH_CUDA_LAUNCH_CHECK("index_select");
}

void gather(const Tensor& out, const Tensor& x, int64_t dim, const Tensor& index) {
  const int64_t n = index.numel();
  const int device = out.device().index;
  const Tensor* ops[3] = {&out, &index, &x};
  const bool through[3] = {false, false, true};
  const OffsetMap<3> map = offset_map<3>("gather", index.sizes(), dim, ops, through);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch_index("gather", index.dtype(), [&](auto itag) {
      using I = typename decltype(itag)::type;
      gather_kernel<<<blocks_for(n), kThreads, 0, stream(device)>>>(
          static_cast<T*>(out.raw_data()), static_cast<const T*>(x.raw_data()),
          static_cast<const I*>(index.raw_data()), x.strides()[dim], map, n);
    });
  });
  REMATCH_CUDA_LAUNCH_CHECK("gather");
}

void scatter_add_(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  const int64_t n = index.numel();
  const int device = out.device().index;
  const Tensor* ops[3] = {&index, &src, &out};
  const bool through[3] = {false, false, true};
  const OffsetMap<3> map = offset_map<3>("scatter_add", index.sizes(), dim, ops, through);
  DeviceBuffer dst(static_cast<size_t>(n) * sizeof(uint64_t), device);
  DeviceBuffer from(static_cast<size_t>(n) * sizeof(int64_t), device);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  dispatch_index("scatter_add", index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    scatter_pairs_kernel<<<blocks_for(n), kThreads, 0, stream(device)>>>(
        dst.as<uint64_t>(), from.as<int64_t>(), static_cast<const I*>(index.raw_data()), out.strides()[dim], map, n);
  });
  REMATCH_CUDA_LAUNCH_CHECK("scatter_add_pairs");
  dispatch_numeric("scatter_add", out.dtype(),
                   [&](auto tag) { add_sorted_runs<typename decltype(tag)::type>(out, src, dst, from, n); });
}

void index_add_(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  const int64_t n = src.numel();
  const int device = out.device().index;
  const Tensor* ops[2] = {&src, &out};
  const bool through[2] = {false, true};
  const OffsetMap<2> map = offset_map<2>("index_add", src.sizes(), dim, ops, through);
  DeviceBuffer dst(static_cast<size_t>(n) * sizeof(uint64_t), device);
  DeviceBuffer from(static_cast<size_t>(n) * sizeof(int64_t), device);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  dispatch_index("index_add", index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    index_add_pairs_kernel<<<blocks_for(n), kThreads, 0, stream(device)>>>(
        dst.as<uint64_t>(), from.as<int64_t>(), static_cast<const I*>(index.raw_data()), index.strides()[0],
        out.strides()[dim], map, n);
  });
  REMATCH_CUDA_LAUNCH_CHECK("index_add_pairs");
  dispatch_numeric("index_add", out.dtype(),
                   [&](auto tag) { add_sorted_runs<typename decltype(tag)::type>(out, src, dst, from, n); });
}

}  // namespace rematch::cuda
