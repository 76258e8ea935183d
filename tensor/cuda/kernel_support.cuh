// Pieces shared by the CUDA index and sort kernels: launch sizes for grid-stride loops, stream-ordered
// scratch buffers, row-major position -> strided offset maps for up to kMaxDims dims, and CUB's stable radix
// sort of (key, value) pairs on a device's stream. They sit in a namespace of their own because other CUDA
// sources of the library define helpers with the same short names in rematch::cuda.
#pragma once

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>

#include "tensor/cuda/check.h"
#include "tensor/cuda/runtime.h"
#include "tensor/tensor_core.h"

namespace rematch::cuda::kernel_support {

constexpr int kThreads = 256;

// Enough blocks to fill the device; a grid-stride loop covers any n beyond that.
inline unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, 65536)));
}

// Device scratch memory from the stream-ordered pool, returned (stream-ordered) when the scope ends, so
// kernels already queued on the stream may still use it.
struct DeviceBuffer {
  DeviceBuffer(size_t nbytes, int device) : ptr(device_malloc(std::max<size_t>(nbytes, 1), device)), dev(device) {}
  ~DeviceBuffer() { device_free(ptr, dev); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T> T* as() const { return static_cast<T*>(ptr); }
  void* ptr;
  int dev;
};

// Kernel parameters have a fixed size, so the offset maps carry at most this many dims.
constexpr int kMaxDims = 16;

// Maps a row-major position p of an iteration shape to the element offsets of N operands (each with its own
// strides over that shape) and to p's coordinate along `dim`. An operand that is addressed through an index
// along `dim` gets stride 0 there; its caller adds index * (its real stride) itself.
template <int N> struct OffsetMap {
  int ndim = 0;
  int dim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};

  __device__ int64_t locate(int64_t p, int64_t (&off)[N]) const {
    for (int q = 0; q < N; ++q) off[q] = 0;
    int64_t j = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t c = p % sizes[d];
      p /= sizes[d];
      if (d == dim) j = c;
      for (int q = 0; q < N; ++q) off[q] += c * strides[q][d];
    }
    return j;
  }
};

// An OffsetMap over `shape` for `operands`; operands whose `through_index` is set get stride 0 along dim.
// `op` names the caller in the error for shapes with more dims than a map holds.
template <int N>
OffsetMap<N> offset_map(const char* op, const Shape& shape, int64_t dim, const Tensor* const (&operands)[N],
                        const bool (&through_index)[N]) {
  REMATCH_CHECK(static_cast<int64_t>(shape.size()) <= kMaxDims, op, ": the CUDA kernel handles at most ",
                kMaxDims, " dims, got shape ", shape_str(shape));
  OffsetMap<N> m;
  m.ndim = static_cast<int>(shape.size());
  m.dim = static_cast<int>(dim);
  for (int d = 0; d < m.ndim; ++d) {
    m.sizes[d] = shape[d];
    for (int q = 0; q < N; ++q) m.strides[q][d] = (through_index[q] && d == dim) ? 0 : operands[q]->strides()[d];
  }
  return m;
}

// Number of low bits that hold every value in [0, max_value]; at least 1.
inline int bits_for(uint64_t max_value) {
  int bits = 1;
  while (bits < 64 && (max_value >> bits) != 0) ++bits;
  return bits;
}

// CUB's radix sort is stable: pairs with equal keys (within bits [0, end_bit)) keep their input order.
template <typename K, typename V>
void stable_sort_pairs(const K* keys_in, K* keys_out, const V* values_in, V* values_out, int64_t n, int end_bit,
                       int device) {
  cudaStream_t s = stream(device);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  size_t temp_bytes = 0;
  REMATCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out, values_in, values_out,
                                                     n, 0, end_bit, s));
  DeviceBuffer temp(temp_bytes, device);
  REMATCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp_bytes, keys_in, keys_out, values_in, values_out,
                                                     n, 0, end_bit, s));
}

}  // namespace rematch::cuda::kernel_support
