// Device-side building blocks of the CUDA elementwise, reduction and fused row kernels (elementwise*.cu,
// reduce.cu, softmax.cu):
//  - launch_elementwise: out[i] = f(in_0[i], in_1[i], ...) over any strided views (broadcast inputs have
//    stride 0). Dims are merged as on the CPU (tensor/cpu/strided_loop.h); fully contiguous operands whose
//    pointers allow it go through 16-byte vector loads and stores, everything else through a kernel that
//    maps the linear index to each operand's offset with 32-bit magic-number division (a GPU has no integer
//    divider, and 64-bit division is several times dearer). Problems with more than kMaxDims merged dims or
//    more than 2^31-1 elements are cut into pieces on the host, one launch each.
//  - warp/row/column all-reductions for the reduction and row-op kernels.
// Everything sits in its own namespace: other CUDA sources of this library define helpers with the same
// short names in rematch::cuda.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "tensor/cuda/check.h"
#include "tensor/tensor_core.h"

namespace rematch::cuda::strided {

constexpr int kMaxDims = 8;                       // merged dims one strided launch handles
constexpr int kBlockThreads = 256;                // elementwise and column kernels
constexpr int kMaxRowThreads = 512;               // threads sharing one row in the row kernels
constexpr int64_t kMaxBlocks = 65536;             // elementwise grid-stride loops cover work beyond this
constexpr int64_t kMaxGroups = int64_t{1} << 20;  // row/column kernels loop over more groups than this
constexpr int64_t kMaxPieceElements = INT32_MAX;  // 32-bit linear indices within one strided launch

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks for `work` items at kBlockThreads per block, at least 1.
inline unsigned grid_size(int64_t work) {
  return static_cast<unsigned>(std::clamp<int64_t>(ceil_div(work, kBlockThreads), 1, kMaxBlocks));
}

// The smallest power of two >= n, capped at `cap` (a power of two).
inline int pow2_at_least(int64_t n, int cap) {
  int p = 1;
  while (p < cap && p < n) p *= 2;
  return p;
}

// Threads sharing a row of length n: about four elements each, between one warp and kMaxRowThreads.
inline int row_threads(int64_t n) { return std::max(32, pow2_at_least(ceil_div(n, 4), kMaxRowThreads)); }

// Division by a fixed divisor d in [1, 2^31-1] of numerators n in [0, 2^31-1] as a multiply-high, add and
// shift (Granlund & Montgomery, "Division by invariant integers using multiplication", 1994; the form PyTorch's
// IntDivider uses). With l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1 < 2^32:
// n / d = (mulhi(n, m) + n) >> l, and the sum cannot overflow because n < 2^31.
struct FastDivmod {
  uint32_t divisor = 1;
  uint32_t multiplier = 1;
  uint32_t shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(uint32_t d) : divisor(d) {
    while ((uint64_t{1} << shift) < d) ++shift;
    multiplier = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  __device__ __forceinline__ uint32_t div(uint32_t n) const { return (__umulhi(n, multiplier) + n) >> shift; }
};

// N operands (operand 0 the output) over one shape, as a kernel parameter: sizes and per-operand element
// strides, innermost dim first.
template <int N> struct Indexer {
  int ndim = 1;
  FastDivmod sizes[kMaxDims];
  int64_t strides[kMaxDims][N] = {};

  // Element offsets of every operand at row-major position `linear` (< 2^31).
  __device__ __forceinline__ void offsets(uint32_t linear, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == ndim) break;
      uint32_t idx = linear;  // the outermost dim takes what is left, no division
      if (d + 1 < ndim) {
        const uint32_t q = sizes[d].div(linear);
        idx = linear - q * sizes[d].divisor;
        linear = q;
      }
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += static_cast<int64_t>(idx) * strides[d][k];
    }
  }
};

template <int N> struct Pointers {
  char* p[N];
};

// Host view of an elementwise problem: merged sizes (outermost first), per-operand strides in elements, and
// each operand's element 0.
template <int N> struct Problem {
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, N>> strides;
  std::array<char*, N> data{};
  std::array<int64_t, N> elem_size{};

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  bool contiguous() const {
    if (sizes.size() != 1) return false;
    for (int k = 0; k < N; ++k)
      if (strides[0][k] != 1) return false;
    return true;
  }
  // One element: shape [1] with unit strides.
  void make_scalar() {
    sizes.assign(1, 1);
    std::array<int64_t, N> ones;
    ones.fill(1);
    strides.assign(1, ones);
  }
};

// Operands must all have ts[0]'s shape (inputs broadcast by the caller). Size-1 dims are dropped, and dim d
// merges into the dim before it when every operand is contiguous across the pair, as on the CPU.
template <int N> Problem<N> make_problem(const std::array<const Tensor*, N>& ts) {
  Problem<N> p;
  for (int k = 0; k < N; ++k) {
    p.data[k] = static_cast<char*>(ts[k]->raw_data());
    p.elem_size[k] = static_cast<int64_t>(dtype_size(ts[k]->dtype()));
  }
  const Shape& shape = ts[0]->sizes();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    std::array<int64_t, N> st;
    for (int k = 0; k < N; ++k) st[k] = ts[k]->strides()[d];
    if (!p.sizes.empty()) {
      bool mergeable = true;
      for (int k = 0; k < N; ++k) mergeable = mergeable && p.strides.back()[k] == st[k] * shape[d];
      if (mergeable) {
        p.sizes.back() *= shape[d];
        p.strides.back() = st;
        continue;
      }
    }
    p.sizes.push_back(shape[d]);
    p.strides.push_back(st);
  }
  if (p.sizes.empty()) p.make_scalar();
  return p;
}

// Calls launch(piece) for pieces of p that one strided launch can take: at most kMaxDims dims and
// kMaxPieceElements elements. Too many dims: one piece per index of the smallest dim, which drops that dim.
// Too many elements: the outermost dim is cut into runs short enough (or looped over one index at a time
// when even one of its slices is too big).
template <int N, typename Launch> void for_each_piece(const Problem<N>& p, const Launch& launch) {
  const int nd = static_cast<int>(p.sizes.size());
  const int64_t total = p.numel();
  if (nd <= kMaxDims && total <= kMaxPieceElements) return launch(p);
  int d = 0;
  if (nd > kMaxDims) d = static_cast<int>(std::min_element(p.sizes.begin(), p.sizes.end()) - p.sizes.begin());
  const int64_t slice = total / p.sizes[d];
  const int64_t step = (nd > kMaxDims || slice > kMaxPieceElements) ? 1 : kMaxPieceElements / slice;
  for (int64_t start = 0; start < p.sizes[d]; start += step) {
    Problem<N> piece = p;
    for (int k = 0; k < N; ++k) piece.data[k] += start * p.strides[d][k] * p.elem_size[k];
    const int64_t len = std::min(step, p.sizes[d] - start);
    if (len == 1) {
      piece.sizes.erase(piece.sizes.begin() + d);
      piece.strides.erase(piece.strides.begin() + d);
      if (piece.sizes.empty()) piece.make_scalar();
    } else {
      piece.sizes[d] = len;
    }
    for_each_piece(piece, launch);
  }
}

template <int N> Indexer<N> make_indexer(const Problem<N>& p) {
  Indexer<N> ix;
  const int nd = static_cast<int>(p.sizes.size());
  ix.ndim = nd;
  for (int d = 0; d < nd; ++d) {
    ix.sizes[d] = FastDivmod(static_cast<uint32_t>(p.sizes[nd - 1 - d]));
    for (int k = 0; k < N; ++k) ix.strides[d][k] = p.strides[nd - 1 - d][k];
  }
  return ix;
}

// VEC elements of T as one aligned access (16 bytes for the widest operand of a kernel).
template <typename T, int VEC> struct alignas(sizeof(T) * VEC) Aligned {
  T v[VEC];
};

// A minimal tuple (one base per element) holding the loaded input vectors of one vector step.
template <size_t I, typename T> struct Slot {
  T value;
};
template <typename Seq, typename... Ts> struct Slots;
template <size_t... I, typename... Ts> struct Slots<std::index_sequence<I...>, Ts...> : Slot<I, Ts>... {};
template <size_t I, typename T> __device__ __forceinline__ const T& slot(const Slot<I, T>& s) { return s.value; }

template <typename Out, typename... In, typename F, size_t... I>
__device__ __forceinline__ void apply_at(const F& f, const Pointers<1 + sizeof...(In)>& ptr,
                                         const int64_t (&off)[1 + sizeof...(In)], std::index_sequence<I...>) {
  reinterpret_cast<Out*>(ptr.p[0])[off[0]] = f(reinterpret_cast<const In*>(ptr.p[I + 1])[off[I + 1]]...);
}

template <int VEC, typename Out, typename... In, typename F, size_t... I>
__device__ __forceinline__ void apply_vector(const F& f, const Pointers<1 + sizeof...(In)>& ptr, int64_t v,
                                             std::index_sequence<I...>) {
  const Slots<std::index_sequence<I...>, Aligned<In, VEC>...> in{
      {reinterpret_cast<const Aligned<In, VEC>*>(ptr.p[I + 1])[v]}...};
  Aligned<Out, VEC> out;
#pragma unroll
  for (int j = 0; j < VEC; ++j) out.v[j] = f(slot<I>(in).v[j]...);
  reinterpret_cast<Aligned<Out, VEC>*>(ptr.p[0])[v] = out;
}

// (CUDA wants a __global__ template's parameter pack last, hence F before the operand types.)
template <typename F, typename Out, typename... In>
__global__ void __launch_bounds__(kBlockThreads)
    strided_kernel(Indexer<1 + sizeof...(In)> ix, Pointers<1 + sizeof...(In)> ptr, int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[1 + sizeof...(In)];
    ix.offsets(static_cast<uint32_t>(i), off);
    apply_at<Out, In...>(f, ptr, off, std::index_sequence_for<In...>{});
  }
}

// All operands contiguous and aligned to VEC elements: VEC elements per step, the n % VEC tail one by one.
template <int VEC, typename F, typename Out, typename... In>
__global__ void __launch_bounds__(kBlockThreads)
    vector_kernel(Pointers<1 + sizeof...(In)> ptr, int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nvec = n / VEC;
  for (int64_t v = first; v < nvec; v += step)
    apply_vector<VEC, Out, In...>(f, ptr, v, std::index_sequence_for<In...>{});
  for (int64_t i = nvec * VEC + first; i < n; i += step) {
    int64_t off[1 + sizeof...(In)];
    for (int64_t& o : off) o = i;
    apply_at<Out, In...>(f, ptr, off, std::index_sequence_for<In...>{});
  }
}

template <typename T, typename... Ts> constexpr size_t max_size() {
  if constexpr (sizeof...(Ts) == 0) return sizeof(T);
  else return std::max(sizeof(T), max_size<Ts...>());
}

// out = f(ins...) elementwise on out's device and stream. Every input must already have out's shape (broadcast
// through kernels::expand); Out and In... are the C++ element types of out and the inputs, which the caller
// has dispatched on. `name` labels launch errors.
template <typename Out, typename... In, typename F>
void launch_elementwise(const char* name, const Tensor& out, const std::array<const Tensor*, sizeof...(In)>& ins,
                        const F& f) {
  constexpr int N = 1 + sizeof...(In);
  const int64_t n = out.numel();
  if (n == 0) return;
  std::array<const Tensor*, N> ts;
  ts[0] = &out;
  std::copy(ins.begin(), ins.end(), ts.begin() + 1);
  const Problem<N> p = make_problem<N>(ts);
  const int device = out.device().index;
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t s = stream(device);

  constexpr int VEC = static_cast<int>(16 / max_size<Out, In...>());
  if (p.contiguous()) {
    bool aligned = true;
    for (int k = 0; k < N; ++k)
      aligned = aligned && reinterpret_cast<uintptr_t>(p.data[k]) % static_cast<uintptr_t>(VEC * p.elem_size[k]) == 0;
    if (aligned) {
      Pointers<N> ptr;
      for (int k = 0; k < N; ++k) ptr.p[k] = p.data[k];
      vector_kernel<VEC, F, Out, In...><<<grid_size((n + VEC - 1) / VEC), kBlockThreads, 0, s>>>(ptr, n, f);
      REMATCH_CUDA_LAUNCH_CHECK(name);
      return;
    }
  }
  for_each_piece(p, [&](const Problem<N>& piece) {
    Pointers<N> ptr;
    for (int k = 0; k < N; ++k) ptr.p[k] = piece.data[k];
    const int64_t count = piece.numel();
    strided_kernel<F, Out, In...><<<grid_size(count), kBlockThreads, 0, s>>>(make_indexer(piece), ptr, count, f);
    REMATCH_CUDA_LAUNCH_CHECK(name);
  });
}

// ---- reductions across threads ------------------------------------------------------------------------------

// __shfl_xor_sync of any trivially copyable T (double, int64, small structs) as 32-bit words.
template <typename T> __device__ __forceinline__ T shfl_xor(const T& v, int mask) {
  constexpr int kWords = static_cast<int>((sizeof(T) + 3) / 4);
  uint32_t w[kWords] = {};
  ::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = __shfl_xor_sync(0xffffffffu, w[i], mask);
  T out;
  ::memcpy(&out, w, sizeof(T));
  return out;
}

// Butterfly reduction over the 32 lanes of a warp: every lane ends with the same total (each combine sees the
// same pair of values in every lane, up to operand order). All 32 lanes must take part.
template <typename T, typename Op> __device__ __forceinline__ T warp_allreduce(T v, const Op& op) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) v = op.combine(v, shfl_xor(v, mask));
  return v;
}

// Reduces over the blockDim.x threads of each block row threadIdx.y (blockDim.x a multiple of 32) and returns
// the total to all of them. smem holds one slot per warp of the block (at most 32). Every thread of the block
// must call it (it synchronises the block when a row spans several warps).
template <typename T, typename Op> __device__ T row_allreduce(T v, const Op& op, T* smem) {
  v = warp_allreduce(v, op);
  const int warps_per_row = static_cast<int>(blockDim.x / 32);
  if (warps_per_row == 1) return v;
  const int base = static_cast<int>(threadIdx.y) * warps_per_row;
  __syncthreads();  // a previous call may still be reading smem
  if (threadIdx.x % 32 == 0) smem[base + threadIdx.x / 32] = v;
  __syncthreads();
  v = smem[base];
  for (int w = 1; w < warps_per_row; ++w) v = op.combine(v, smem[base + w]);
  return v;
}

// Reduces over the blockDim.y threads of each block column threadIdx.x (blockDim.y a power of two) and returns
// the total to all of them. smem holds blockDim.x * blockDim.y slots. Every thread of the block must call it.
template <typename T, typename Op> __device__ T column_allreduce(T v, const Op& op, T* smem) {
  const int bx = static_cast<int>(blockDim.x);
  const int at = static_cast<int>(threadIdx.y) * bx + static_cast<int>(threadIdx.x);
  __syncthreads();  // a previous call may still be reading smem
  smem[at] = v;
  __syncthreads();
  for (int s = static_cast<int>(blockDim.y) / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.y) < s) smem[at] = op.combine(smem[at], smem[at + s * bx]);
    __syncthreads();
  }
  return smem[threadIdx.x];
}

}  // namespace rematch::cuda::strided
