// CUDA Sum/Mean/Max/Min over x viewed as [outer, R, inner], and Max/Min with first-occurrence indices over the
// rows of [rows, R]. The semantics follow tensor/cpu/reduce.cpp:
//  - sums accumulate in double for floating types and int64 for integers (the CPU adds its float blocks in
//    double; here every addition is in double, which is at least as accurate), then convert to the element
//    type; Mean divides by R when inner == 1 and multiplies by 1/R otherwise, as the two CPU loops do;
//  - Max/Min: a NaN anywhere makes the result NaN;
//  - indexed Max/Min: the first NaN if there is one, else the first position holding the extreme. The combine
//    step breaks ties by position, so the answer does not depend on the order threads combine in.
// Two kernel shapes: rows (inner == 1: a row's threads stride along it, coalesced) and columns (inner > 1:
// adjacent threads take adjacent outputs, walking R together). When there are too few outputs to fill the
// device, R is split over gridDim.y, partial results go to scratch and a second pass reduces them.
#include <algorithm>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "tensor/creation.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/runtime.h"
#include "tensor/cuda/strided.cuh"

namespace rematch::cuda {
namespace {

using kernels::ReduceOp;
using strided::ceil_div;
using strided::kBlockThreads;
using strided::kMaxGroups;
using strided::kMaxRowThreads;

constexpr int64_t kMinPerThread = 16;  // elements per thread before R is split across blocks
constexpr int64_t kMaxSplits = 65535;  // gridDim.y limit

// ---- reduction ops: identity, load (element, position) -> accumulator, combine --------------------------------
template <typename Acc> struct SumOp {
  using acc_type = Acc;
  __device__ Acc identity() const { return Acc(0); }
  template <typename In> __device__ Acc load(In v, int64_t) const { return static_cast<Acc>(v); }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
};

// The CPU's pick(): NaN wins, so once a NaN is seen the result stays NaN.
template <typename T, bool kMax> struct ExtremeOp {
  using acc_type = T;
  __device__ T identity() const {
    if constexpr (std::is_floating_point_v<T>)
      return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  __device__ T load(T v, int64_t) const { return v; }
  __device__ T combine(T a, T b) const {
    if constexpr (kMax) return (b > a || b != b) ? b : a;
    else return (b < a || b != b) ? b : a;
  }
};

// index < 0 marks "no element yet".
template <typename T> struct ArgPair {
  T value;
  int64_t index;
};

template <typename T, bool kMax> struct ArgExtremeOp {
  using acc_type = ArgPair<T>;
  __device__ ArgPair<T> identity() const { return {T(0), -1}; }
  __device__ ArgPair<T> load(T v, int64_t r) const { return {v, r}; }
  __device__ ArgPair<T> load(ArgPair<T> p, int64_t) const { return p; }
  // Commutative and associative: NaN beats numbers, the better value beats the worse, and among equals
  // (NaN or not) the lower position wins — the CPU's sequential scan gives exactly this element.
  __device__ ArgPair<T> combine(ArgPair<T> a, ArgPair<T> b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = a.value != a.value, b_nan = b.value != b.value;
    if (a_nan != b_nan) return a_nan ? a : b;
    if (!a_nan) {
      if (kMax ? b.value > a.value : b.value < a.value) return b;
      if (kMax ? a.value > b.value : a.value < b.value) return a;
    }
    return b.index < a.index ? b : a;
  }
};

// ---- stores: what happens to the reduced value of output k ------------------------------------------------------
template <typename T, typename Acc> struct StoreCast {
  T* out;
  __device__ void operator()(int64_t k, Acc a) const { out[k] = static_cast<T>(a); }
};
template <typename T, typename Acc> struct StoreMeanDivide {
  T* out;
  double count;
  __device__ void operator()(int64_t k, Acc a) const { out[k] = static_cast<T>(static_cast<double>(a) / count); }
};
template <typename T, typename Acc> struct StoreMeanScale {
  T* out;
  double scale;
  __device__ void operator()(int64_t k, Acc a) const { out[k] = static_cast<T>(static_cast<double>(a) * scale); }
};
template <typename Acc> struct StorePartial {
  Acc* out;
  __device__ void operator()(int64_t k, Acc a) const { out[k] = a; }
};
template <typename T> struct StoreArg {
  T* values;
  int64_t* indices;
  __device__ void operator()(int64_t k, ArgPair<T> a) const {
    values[k] = a.value;
    indices[k] = a.index;
  }
};

// ---- kernels ----------------------------------------------------------------------------------------------------
// Rows of length R, blockDim.x threads per row and blockDim.y rows per block; block (x, y) covers positions
// [y * chunk, (y + 1) * chunk) of its rows and stores output row * gridDim.y + y.
template <typename In, typename Op, typename Store>
__global__ void __launch_bounds__(kMaxRowThreads)
    reduce_rows_kernel(const In* x, int64_t rows, int64_t R, int64_t chunk, Op op, Store store) {
  using Acc = typename Op::acc_type;
  __shared__ Acc smem[32];
  const int64_t r_begin = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t r_end = min(R, r_begin + chunk);
  const int64_t groups = (rows + blockDim.y - 1) / blockDim.y;
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const int64_t row = g * blockDim.y + threadIdx.y;
    Acc acc = op.identity();
    if (row < rows) {
      const In* p = x + row * R;
      for (int64_t r = r_begin + threadIdx.x; r < r_end; r += blockDim.x) acc = op.combine(acc, op.load(p[r], r));
    }
    acc = strided::row_allreduce(acc, op, smem);
    if (row < rows && threadIdx.x == 0) store(row * gridDim.y + blockIdx.y, acc);
  }
}

// [outer, R, inner] with the outer * inner outputs flattened: blockDim.x adjacent outputs per block,
// blockDim.y threads walking R for each; block (x, y) covers [y * chunk, (y + 1) * chunk) of R and stores
// output (o * gridDim.y + y) * inner + i.
template <typename In, typename Op, typename Store>
__global__ void __launch_bounds__(kBlockThreads)
    reduce_columns_kernel(const In* x, int64_t outer, int64_t R, int64_t inner, int64_t chunk, Op op, Store store) {
  using Acc = typename Op::acc_type;
  __shared__ Acc smem[kBlockThreads];
  const int64_t r_begin = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t r_end = min(R, r_begin + chunk);
  const int64_t lanes = outer * inner;
  const int64_t groups = (lanes + blockDim.x - 1) / blockDim.x;
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const int64_t q = g * blockDim.x + threadIdx.x;
    const int64_t o = q / inner, i = q % inner;
    Acc acc = op.identity();
    if (q < lanes) {
      const In* p = x + o * R * inner + i;
      for (int64_t r = r_begin + threadIdx.y; r < r_end; r += blockDim.y)
        acc = op.combine(acc, op.load(p[r * inner], r));
    }
    acc = strided::column_allreduce(acc, op, smem);
    if (q < lanes && threadIdx.y == 0) store((o * gridDim.y + blockIdx.y) * inner + i, acc);
  }
}

// ---- launch planning ----------------------------------------------------------------------------------------------
int multiprocessor_count(int device) {
  static std::mutex mutex;
  static std::vector<int> counts;
  std::lock_guard<std::mutex> lock(mutex);
  if (counts.size() <= static_cast<size_t>(device)) counts.resize(static_cast<size_t>(device) + 1, 0);
  if (counts[device] == 0)
    REMATCH_CUDA_CHECK(cudaDeviceGetAttribute(&counts[device], cudaDevAttrMultiProcessorCount, device));
  return counts[device];
}

struct Plan {
  dim3 block;
  unsigned grid_x = 1;
  int64_t splits = 1;
  int64_t chunk = 0;
};

// `groups` blocks along x; R is split over enough blocks to give the device about two blocks per
// multiprocessor, as long as every thread keeps at least kMinPerThread elements.
Plan plan(dim3 block, int64_t groups, int64_t R, int threads_along_r, int device) {
  Plan p;
  p.block = block;
  p.grid_x = static_cast<unsigned>(std::min(groups, kMaxGroups));
  const int64_t target = 2 * static_cast<int64_t>(multiprocessor_count(device));
  if (groups < target)
    p.splits = std::clamp<int64_t>(std::min(ceil_div(target, groups), R / (threads_along_r * kMinPerThread)), 1,
                                   kMaxSplits);
  p.chunk = ceil_div(R, p.splits);
  p.splits = ceil_div(R, p.chunk);  // no empty split
  return p;
}

Plan plan_rows(int64_t rows, int64_t R, int device) {
  const int bx = strided::row_threads(R);
  const int by = std::max(1, kBlockThreads / bx);
  return plan(dim3(bx, by), ceil_div(rows, by), R, bx, device);
}

Plan plan_columns(int64_t lanes, int64_t R, int device) {
  const int bx = strided::pow2_at_least(lanes, 32);
  const int by = kBlockThreads / bx;
  return plan(dim3(bx, by), ceil_div(lanes, bx), R, by, device);
}

// Reduces each row of x [rows, R] into store(row, .), through partial passes when R is split.
template <typename In, typename Op, typename Store>
void reduce_rows(const char* name, const In* x, int64_t rows, int64_t R, const Op& op, const Store& store,
                 int device) {
  using Acc = typename Op::acc_type;
  const Plan p = plan_rows(rows, R, device);
  cudaStream_t s = stream(device);
  const dim3 grid(p.grid_x, static_cast<unsigned>(p.splits));
  if (p.splits == 1) {
    reduce_rows_kernel<<<grid, p.block, 0, s>>>(x, rows, R, p.chunk, op, store);
    REMATCH_CUDA_LAUNCH_CHECK(name);
    return;
  }
  // The scratch block is freed in stream order, after the second pass has read it.
  const Tensor partial =
      empty({rows * p.splits * static_cast<int64_t>(sizeof(Acc))}, DType::UInt8, Device::cuda(device));
  Acc* partial_data = static_cast<Acc*>(partial.raw_data());
  reduce_rows_kernel<<<grid, p.block, 0, s>>>(x, rows, R, p.chunk, op, StorePartial<Acc>{partial_data});
  REMATCH_CUDA_LAUNCH_CHECK(name);
  reduce_rows(name, static_cast<const Acc*>(partial_data), rows, p.splits, op, store, device);
}

// Reduces x [outer, R, inner] over R into store(o * inner + i, .), through partial passes when R is split.
template <typename In, typename Op, typename Store>
void reduce_columns(const char* name, const In* x, int64_t outer, int64_t R, int64_t inner, const Op& op,
                    const Store& store, int device) {
  using Acc = typename Op::acc_type;
  const Plan p = plan_columns(outer * inner, R, device);
  cudaStream_t s = stream(device);
  const dim3 grid(p.grid_x, static_cast<unsigned>(p.splits));
  if (p.splits == 1) {
    reduce_columns_kernel<<<grid, p.block, 0, s>>>(x, outer, R, inner, p.chunk, op, store);
    REMATCH_CUDA_LAUNCH_CHECK(name);
    return;
  }
  const Tensor partial =
      empty({outer * p.splits * inner * static_cast<int64_t>(sizeof(Acc))}, DType::UInt8, Device::cuda(device));
  Acc* partial_data = static_cast<Acc*>(partial.raw_data());
  reduce_columns_kernel<<<grid, p.block, 0, s>>>(x, outer, R, inner, p.chunk, op, StorePartial<Acc>{partial_data});
  REMATCH_CUDA_LAUNCH_CHECK(name);
  reduce_columns(name, static_cast<const Acc*>(partial_data), outer, p.splits, inner, op, store, device);
}

template <typename T, typename Op, typename Store>
void reduce_any(const char* name, const T* x, int64_t outer, int64_t R, int64_t inner, const Op& op,
                const Store& store, int device) {
  if (inner == 1) reduce_rows(name, x, outer, R, op, store, device);
  else reduce_columns(name, x, outer, R, inner, op, store, device);
}

}  // namespace

void reduce(ReduceOp op, const Tensor& out, const Tensor& x, int64_t outer, int64_t R, int64_t inner) {
  if (outer * inner == 0 || R == 0) return;  // the dispatcher has already filled empty reductions
  const int device = x.device().index;
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  const char* name = kernels::reduce_name(op);
  dispatch_numeric("reduce", x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    const T* xp = static_cast<const T*>(x.raw_data());
    T* out_data = static_cast<T*>(out.raw_data());
    switch (op) {
      case ReduceOp::Sum:
        return reduce_any(name, xp, outer, R, inner, SumOp<Acc>{}, StoreCast<T, Acc>{out_data}, device);
      case ReduceOp::Mean:
        if (inner == 1)
          return reduce_any(name, xp, outer, R, inner, SumOp<Acc>{},
                            StoreMeanDivide<T, Acc>{out_data, static_cast<double>(R)}, device);
        return reduce_any(name, xp, outer, R, inner, SumOp<Acc>{},
                          StoreMeanScale<T, Acc>{out_data, 1.0 / static_cast<double>(R)}, device);
      case ReduceOp::Max:
        return reduce_any(name, xp, outer, R, inner, ExtremeOp<T, true>{}, StoreCast<T, T>{out_data}, device);
      case ReduceOp::Min:
        return reduce_any(name, xp, outer, R, inner, ExtremeOp<T, false>{}, StoreCast<T, T>{out_data}, device);
    }
  });
}

void reduce_with_index(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& x, int64_t rows,
                       int64_t R) {
  if (rows == 0 || R == 0) return;
  const int device = x.device().index;
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  dispatch_numeric("max/min", x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = static_cast<const T*>(x.raw_data());
    const StoreArg<T> store{static_cast<T*>(values.raw_data()), static_cast<int64_t*>(indices.raw_data())};
    if (op == ReduceOp::Max) reduce_rows("max", xp, rows, R, ArgExtremeOp<T, true>{}, store, device);
    else reduce_rows("min", xp, rows, R, ArgExtremeOp<T, false>{}, store, device);
  });
}

}  // namespace rematch::cuda
