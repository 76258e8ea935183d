// CUDA fills of the Philox streams: one grid-stride kernel per distribution, each element computed by the
// same tensor/philox.h function the CPU path calls, so both devices give the same numbers for a seed.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <type_traits>

#include "tensor/cuda/check.h"
#include "tensor/cuda/random_kernels.h"
#include "tensor/cuda/runtime.h"
#include "tensor/philox.h"

namespace rematch::cuda {
namespace {

constexpr int kThreads = 256;

// Enough blocks to fill the device; the grid-stride loop covers any n beyond that.
unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65536));
}

template <typename T, typename F>
__global__ void philox_fill_kernel(T* out, int64_t n, uint64_t seed, uint64_t offset, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = f(philox::element_block(seed, offset, static_cast<uint64_t>(i)), i);
}

template <typename T, typename F>
void launch_fill(const char* name, T* out, int64_t n, uint64_t seed, uint64_t offset, int device, F f) {
  if (n == 0) return;
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  philox_fill_kernel<<<blocks_for(n), kThreads, 0, stream(device)>>>(out, n, seed, offset, f);
  REMATCH_CUDA_LAUNCH_CHECK(name);
}

// Functors rather than device lambdas: the build does not enable nvcc's --extended-lambda.
template <typename T> struct Uniform {
  __device__ T operator()(const philox::Block& b, int64_t) const {
    if constexpr (std::is_same_v<T, float>) return philox::uniform_float(b.w[0]);
    else return philox::uniform_double(b.w[0], b.w[1]);
  }
};

template <typename T> struct Normal {
  __device__ T operator()(const philox::Block& b, int64_t) const {
    if constexpr (std::is_same_v<T, float>) return philox::normal_float(b);
    else return philox::normal_double(b);
  }
};

template <typename T> struct RandInt {
  int64_t low;
  uint64_t range;
  __device__ T operator()(const philox::Block& b, int64_t) const {
    return static_cast<T>(philox::randint(b, low, range));
  }
};

struct BernoulliScalar {
  double p;
  __device__ bool operator()(const philox::Block& b, int64_t) const { return philox::bernoulli(b, p); }
};

template <typename T> struct BernoulliTensor {
  const T* p;
  __device__ bool operator()(const philox::Block& b, int64_t i) const {
    return philox::bernoulli(b, static_cast<double>(p[i]));
  }
};

struct PermKey {
  __device__ uint64_t operator()(const philox::Block& b, int64_t) const { return philox::perm_key(b); }
};

__global__ void iota_kernel(int64_t* out, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) out[i] = i;
}

template <typename T> __global__ void probabilities_check_kernel(const T* p, int64_t n, int* bad) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    if (!(p[i] >= T(0) && p[i] <= T(1))) *bad = 1;  // any writer will do: only "some" matters
}

// Device scratch memory from the stream-ordered pool, returned when the scope ends.
struct DeviceBuffer {
  DeviceBuffer(size_t nbytes, int device) : ptr(device_malloc(nbytes, device)), dev(device) {}
  ~DeviceBuffer() { device_free(ptr, dev); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* ptr;
  int dev;
};

}  // namespace

void philox_uniform(void* out, DType dtype, int64_t n, uint64_t seed, uint64_t offset, int device) {
  if (dtype == DType::Float32)
    launch_fill("philox_uniform", static_cast<float*>(out), n, seed, offset, device, Uniform<float>{});
  else
    launch_fill("philox_uniform", static_cast<double*>(out), n, seed, offset, device, Uniform<double>{});
}

void philox_normal(void* out, DType dtype, int64_t n, uint64_t seed, uint64_t offset, int device) {
  if (dtype == DType::Float32)
    launch_fill("philox_normal", static_cast<float*>(out), n, seed, offset, device, Normal<float>{});
  else
    launch_fill("philox_normal", static_cast<double*>(out), n, seed, offset, device, Normal<double>{});
}

void philox_randint(void* out, DType dtype, int64_t n, int64_t low, uint64_t range, uint64_t seed, uint64_t offset,
                    int device) {
  if (dtype == DType::Int32)
    launch_fill("philox_randint", static_cast<int32_t*>(out), n, seed, offset, device, RandInt<int32_t>{low, range});
  else
    launch_fill("philox_randint", static_cast<int64_t*>(out), n, seed, offset, device, RandInt<int64_t>{low, range});
}

void philox_bernoulli(bool* out, int64_t n, double p, uint64_t seed, uint64_t offset, int device) {
  launch_fill("philox_bernoulli", out, n, seed, offset, device, BernoulliScalar{p});
}

bool probabilities_valid(const void* p, DType p_dtype, int64_t n, int device) {
  if (n == 0) return true;
  DeviceBuffer bad(sizeof(int), device);
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  REMATCH_CUDA_CHECK(cudaMemsetAsync(bad.ptr, 0, sizeof(int), stream(device)));
  int* flag = static_cast<int*>(bad.ptr);
  if (p_dtype == DType::Float32)
    probabilities_check_kernel<<<blocks_for(n), kThreads, 0, stream(device)>>>(static_cast<const float*>(p), n, flag);
  else
    probabilities_check_kernel<<<blocks_for(n), kThreads, 0, stream(device)>>>(static_cast<const double*>(p), n, flag);
  REMATCH_CUDA_LAUNCH_CHECK("probabilities_check");
  int host_flag = 0;
  memcpy(&host_flag, Device::cpu(), flag, Device::cuda(device), sizeof(int));  // synchronises
  return host_flag == 0;
}

void philox_bernoulli_tensor(bool* out, const void* p, DType p_dtype, int64_t n, uint64_t seed, uint64_t offset,
                             int device) {
  if (p_dtype == DType::Float32)
    launch_fill("philox_bernoulli", out, n, seed, offset, device, BernoulliTensor<float>{static_cast<const float*>(p)});
  else
    launch_fill("philox_bernoulli", out, n, seed, offset, device,
                BernoulliTensor<double>{static_cast<const double*>(p)});
}

void philox_randperm(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int device) {
  if (n == 0) return;
  const size_t bytes = static_cast<size_t>(n) * sizeof(uint64_t);
  DeviceBuffer keys_in(bytes, device), keys_out(bytes, device), index_in(bytes, device);
  cudaStream_t s = stream(device);
  launch_fill("philox_perm_keys", static_cast<uint64_t*>(keys_in.ptr), n, seed, offset, device, PermKey{});
  iota_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<int64_t*>(index_in.ptr), n);
  REMATCH_CUDA_LAUNCH_CHECK("iota");
  // A stable radix sort of the keys carrying ascending indices orders equal keys by index, exactly as the
  // CPU's sort of (key, index) pairs does.
  auto sort = [&](void* temp, size_t& temp_bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, static_cast<const uint64_t*>(keys_in.ptr),
                                           static_cast<uint64_t*>(keys_out.ptr),
                                           static_cast<const int64_t*>(index_in.ptr), out, n, 0,
                                           static_cast<int>(8 * sizeof(uint64_t)), s);
  };
  size_t temp_bytes = 0;
  REMATCH_CUDA_CHECK(sort(nullptr, temp_bytes));
  DeviceBuffer temp(std::max<size_t>(temp_bytes, 1), device);
  REMATCH_CUDA_CHECK(sort(temp.ptr, temp_bytes));
}

}  // namespace rematch::cuda
