// CUDA sort and top-k along one dim, the counterpart of tensor/cpu/sort.cpp, with the same strict total order:
// values first (NaN the largest value, -0.0 equal to +0.0), then the original index. Each value becomes an
// unsigned key whose plain ascending order is that order: floats get the usual sign-flip transform after
// folding -0.0 into +0.0 and every NaN into the all-ones key (CUB's own float keys order NaNs by their sign
// bit, putting -NaN first); descending takes the bitwise complement, which reverses distinct keys but leaves
// equal keys equal, so ties still keep ascending index order under a stable ascending sort.
//
// Lanes are sorted with two device-wide stable radix sorts rather than a segmented sort, which gives each
// segment one thread block and would leave a long lane (a 1-D sort of a million values) on one SM: first all
// (key, position) pairs by key, then the resulting positions by lane. The second sort is stable, so within a
// lane the order of the first survives: by key, ties by position, i.e. by index along dim. Top-k is the first
// k of each sorted lane, exactly as on the CPU.
#include <cstdint>

#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/kernel_support.cuh"

namespace rematch::cuda {

using namespace kernel_support;

namespace {

// IEEE bits of a float or double as the unsigned U: NaN to all ones, ±0 to one key, then negative values
// (sign bit set) complemented and non-negative ones given the sign bit, which orders them like the numbers.
// Tested on the bits rather than with comparisons, which fast-math flags may fold away.
template <typename U> __device__ U float_key(U bits) {
  constexpr U sign = U{1} << (8 * sizeof(U) - 1);
  constexpr int mantissa_bits = sizeof(U) == 4 ? 23 : 52;
  constexpr U exponent = (sign - 1) & ~((U{1} << mantissa_bits) - 1);  // the field between sign and mantissa
  const U magnitude = bits & ~sign;
  if (magnitude > exponent) return ~U{0};  // NaN: all-ones exponent, non-zero mantissa
  if (magnitude == 0) return sign;         // -0.0 keys as +0.0
  return (bits & sign) ? ~bits : (bits | sign);
}

template <typename T> struct SortKey;
template <> struct SortKey<float> {
  using type = uint32_t;
  __device__ static type of(float v) { return float_key<uint32_t>(__float_as_uint(v)); }
};
template <> struct SortKey<double> {
  using type = uint64_t;
  __device__ static type of(double v) { return float_key<uint64_t>(static_cast<uint64_t>(__double_as_longlong(v))); }
};
template <> struct SortKey<int32_t> {
  using type = uint32_t;
  __device__ static type of(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }
};
template <> struct SortKey<int64_t> {
  using type = uint64_t;
  __device__ static type of(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }
};
template <> struct SortKey<uint8_t> {
  using type = uint8_t;
  __device__ static type of(uint8_t v) { return v; }
};

// Element (lane, j) of a contiguous x viewed as [outer, n, inner], lane = o * inner + i.
__device__ inline int64_t lane_offset(int64_t lane, int64_t j, int64_t n, int64_t inner) {
  return (lane / inner) * n * inner + j * inner + lane % inner;
}

// keys[p] and positions[p] for p = lane * n + j.
template <typename T>
__global__ void sort_keys_kernel(typename SortKey<T>::type* keys, int64_t* positions, const T* x, int64_t total,
                                 int64_t n, int64_t inner, bool descending) {
  using K = typename SortKey<T>::type;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < total; p += step) {
    const K key = SortKey<T>::of(x[lane_offset(p / n, p % n, n, inner)]);
    keys[p] = descending ? static_cast<K>(~key) : key;
    positions[p] = p;
  }
}

__global__ void lane_of_kernel(uint64_t* lanes, const int64_t* positions, int64_t total, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < total; p += step)
    lanes[p] = static_cast<uint64_t>(positions[p] / n);
}

// The first k of each sorted lane: positions sorted into [lanes, n] order, outputs contiguous [outer, k, inner].
template <typename T>
__global__ void write_prefix_kernel(T* values, int64_t* indices, const T* x, const int64_t* sorted, int64_t count,
                                    int64_t n, int64_t k, int64_t inner) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < count; q += step) {
    const int64_t lane = q / k, r = q % k;
    const int64_t j = sorted[lane * n + r] - lane * n;
    const int64_t at = lane_offset(lane, r, k, inner);
    values[at] = x[lane_offset(lane, j, n, inner)];
    indices[at] = j;
  }
}

template <typename T>
void sort_typed(const Tensor& values, const Tensor& indices, const Tensor& x, int64_t dim, bool descending,
                int64_t k) {
  using K = typename SortKey<T>::type;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.size(d);
    if (d > dim) inner *= x.size(d);
  }
  const int64_t n = x.dim() ? x.size(dim) : 1;
  const int64_t lanes = outer * inner, total = lanes * n;
  const int device = x.device().index;
  cudaStream_t s = stream(device);
  const size_t key_bytes = static_cast<size_t>(total) * sizeof(K);
  const size_t position_bytes = static_cast<size_t>(total) * sizeof(int64_t);
  DeviceBuffer keys(key_bytes, device), keys_sorted(key_bytes, device);
  DeviceBuffer positions(position_bytes, device), by_key(position_bytes, device);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  sort_keys_kernel<T><<<blocks_for(total), kThreads, 0, s>>>(keys.as<K>(), positions.as<int64_t>(),
                                                            static_cast<const T*>(x.raw_data()), total, n, inner,
                                                            descending);
  REMATCH_CUDA_LAUNCH_CHECK("sort_keys");
  stable_sort_pairs(keys.as<K>(), keys_sorted.as<K>(), positions.as<int64_t>(), by_key.as<int64_t>(), total,
                    static_cast<int>(8 * sizeof(K)), device);
  const int64_t* sorted = by_key.as<int64_t>();
  if (lanes > 1) {
    DeviceBuffer lane_keys(position_bytes, device), lane_keys_sorted(position_bytes, device);  // 8 bytes each
    lane_of_kernel<<<blocks_for(total), kThreads, 0, s>>>(lane_keys.as<uint64_t>(), by_key.as<int64_t>(), total, n);
    REMATCH_CUDA_LAUNCH_CHECK("sort_lane_keys");
    // `positions` is free once the first sort has read it, and takes the final order.
    stable_sort_pairs(lane_keys.as<uint64_t>(), lane_keys_sorted.as<uint64_t>(), by_key.as<int64_t>(),
                      positions.as<int64_t>(), total, bits_for(static_cast<uint64_t>(lanes - 1)), device);
    sorted = positions.as<int64_t>();
  }
  const int64_t count = lanes * k;
  write_prefix_kernel<T><<<blocks_for(count), kThreads, 0, s>>>(
      static_cast<T*>(values.raw_data()), static_cast<int64_t*>(indices.raw_data()),
      static_cast<const T*>(x.raw_data()), sorted, count, n, k, inner);
  REMATCH_CUDA_LAUNCH_CHECK("sort_write_prefix");
}

}  // namespace

void sort(const Tensor& values, const Tensor& indices, const Tensor& x, int64_t dim, bool descending, int64_t k) {
  dispatch_numeric("sort", x.dtype(), [&](auto tag) {
    sort_typed<typename decltype(tag)::type>(values, indices, x, dim, descending, k);
  });
}

}  // namespace rematch::cuda
