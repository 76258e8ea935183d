// The CUDA runtime as rematch's CUDA sources use it, run on the CPU (docs/cuda_emulator.md). This header stands
// in for the toolkit's cuda_runtime.h in a build configured with -DREMATCH_CUDA=EMULATE: the same names and
// signatures for the calls rematch makes, the kernel language (built-in variables, barriers, warp shuffles,
// atomics, shared memory) and the launch that tools/cuda_emu/translate.py writes in place of `<<<...>>>`.
// Device memory is host memory; kernels run on fibers, one per CUDA thread (tools/cuda_emu/launch.cpp), with
// the limits of an H200 checked at every launch.
#pragma once

#include <math.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#define CUDART_VERSION 13000
#define REMATCH_CUDA_EMULATED 1

// ---- types -----------------------------------------------------------------------------------------------
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInsufficientDriver = 35,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchFailure = 719,
  cudaErrorCooperativeLaunchTooLarge = 720,
};
using cudaError = cudaError_t;

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

struct CUstream_st;
struct CUevent_st;
struct CUmemPoolHandle_st;
using cudaStream_t = CUstream_st*;
using cudaEvent_t = CUevent_st*;
using cudaMemPool_t = CUmemPoolHandle_st*;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
constexpr unsigned cudaStreamNonBlocking = 0x01;
constexpr unsigned cudaEventDisableTiming = 0x02;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
enum cudaMemPoolAttr {
  cudaMemPoolReuseFollowEventDependencies = 1,
  cudaMemPoolReuseAllowOpportunistic = 2,
  cudaMemPoolReuseAllowInternalDependencies = 3,
  cudaMemPoolAttrReleaseThreshold = 4,
  cudaMemPoolAttrReservedMemCurrent = 5,
  cudaMemPoolAttrReservedMemHigh = 6,
  cudaMemPoolAttrUsedMemCurrent = 7,
  cudaMemPoolAttrUsedMemHigh = 8,
};
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrCooperativeLaunch = 95,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};
struct cudaFuncAttributes {
  size_t sharedSizeBytes;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
};
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  size_t sharedMemPerBlockOptin;
  size_t sharedMemPerMultiprocessor;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int maxThreadsPerMultiProcessor;
  int multiProcessorCount;
  int major;
  int minor;
  int cooperativeLaunch;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
};

// ---- the runtime API (tools/cuda_emu/runtime_api.cpp) -------------------------------------------------------
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceGetPCIBusId(char* bus, int len, int device);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorName(cudaError_t error);
const char* cudaGetErrorString(cudaError_t error);

cudaError_t cudaMalloc(void** ptr, size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t stream);
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset(void* ptr, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t min_bytes_to_keep);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

// Per-kernel attributes, keyed by the kernel's address (tools/cuda_emu/launch.cpp).
namespace cuda_emu {
cudaError_t func_set_attribute(const void* func, cudaFuncAttribute attr, int value);
cudaError_t func_get_attributes(cudaFuncAttributes* attr, const void* func);
cudaError_t occupancy_blocks_per_sm(int* blocks, const void* func, int block_size, size_t dynamic_smem);
}  // namespace cuda_emu
template <class F> cudaError_t cudaFuncSetAttribute(F* func, cudaFuncAttribute attr, int value) {
  return cuda_emu::func_set_attribute(reinterpret_cast<const void*>(func), attr, value);
}
template <class F> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, F* func) {
  return cuda_emu::func_get_attributes(attr, reinterpret_cast<const void*>(func));
}
template <class F>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, F* func, int block_size, size_t smem) {
  return cuda_emu::occupancy_blocks_per_sm(blocks, reinterpret_cast<const void*>(func), block_size, smem);
}

// ---- the kernel language -----------------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __grid_constant__
#define __align__(n) alignas(n)
#define __restrict__ __restrict
// `__shared__` declarations are rewritten by tools/cuda_emu/translate.py; one it missed does not compile.
#define __shared__ __shared___was_not_rewritten_by_tools_cuda_emu_translate_py

namespace cuda_emu {
// The calling fiber's built-in variables, set by the scheduler before it resumes a fiber.
extern thread_local uint3 thread_idx;
extern thread_local uint3 block_idx;
extern thread_local dim3 block_dim;
extern thread_local dim3 grid_dim;

void syncthreads();
int syncthreads_count(int predicate);  // how many threads of the block passed a true predicate
void grid_sync();
// Exchanges 8 bytes across the lanes of `mask`: every lane of the mask must call it (a lane that has exited,
// or a mask naming lanes that do not exist, stops the program with the kernel's name).
uint64_t warp_exchange(unsigned mask, uint64_t value, int src_lane);
unsigned warp_ballot(unsigned mask, bool predicate);
unsigned lane_id();
void* dynamic_shared_memory();
void* static_shared_memory(int id, size_t bytes, size_t align);
[[noreturn]] void kernel_fault(const char* what);
// Resume threads (and run blocks) in reverse order from now on (REMATCH_CUDA_EMU_SCHEDULE=reverse at start).
void set_reverse_schedule(bool reverse);
}  // namespace cuda_emu

#define threadIdx (::cuda_emu::thread_idx)
#define blockIdx (::cuda_emu::block_idx)
#define blockDim (::cuda_emu::block_dim)
#define gridDim (::cuda_emu::grid_dim)
constexpr int warpSize = 32;

inline void __syncthreads() { ::cuda_emu::syncthreads(); }
inline int __syncthreads_count(int p) { return ::cuda_emu::syncthreads_count(p); }
inline int __syncthreads_and(int p) {
  return ::cuda_emu::syncthreads_count(p) ==
         static_cast<int>(::cuda_emu::block_dim.x * ::cuda_emu::block_dim.y * ::cuda_emu::block_dim.z);
}
inline int __syncthreads_or(int p) { return ::cuda_emu::syncthreads_count(p) > 0; }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::cuda_emu::warp_ballot(mask, true); }
inline void __threadfence() {}
inline void __threadfence_block() {}

namespace cuda_emu {
template <class T> uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "warp shuffles move at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <class T> T from_bits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}
// Source lane of a shuffle within its segment of `width` lanes (PTX shfl.sync: out-of-segment reads own lane).
inline int segment_lane(int src, int width) {
  const int lane = static_cast<int>(lane_id());
  const int base = lane & ~(width - 1);
  return src >= 0 && src < width ? base + src : lane;
}
}  // namespace cuda_emu

template <class T> T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  return ::cuda_emu::from_bits<T>(::cuda_emu::warp_exchange(mask, ::cuda_emu::to_bits(v),
                                                            ::cuda_emu::segment_lane(src % width, width)));
}
template <class T> T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const int lane = static_cast<int>(::cuda_emu::lane_id());
  const int src = (lane ^ lane_mask);
  const int base = lane & ~(width - 1);
  return ::cuda_emu::from_bits<T>(
      ::cuda_emu::warp_exchange(mask, ::cuda_emu::to_bits(v), (src & ~(width - 1)) == base ? src : lane));
}
template <class T> T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = static_cast<int>(::cuda_emu::lane_id());
  const int in_segment = (lane & (width - 1)) + static_cast<int>(delta);
  return ::cuda_emu::from_bits<T>(
      ::cuda_emu::warp_exchange(mask, ::cuda_emu::to_bits(v), in_segment < width ? lane + static_cast<int>(delta) : lane));
}
template <class T> T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = static_cast<int>(::cuda_emu::lane_id());
  const int in_segment = (lane & (width - 1)) - static_cast<int>(delta);
  return ::cuda_emu::from_bits<T>(
      ::cuda_emu::warp_exchange(mask, ::cuda_emu::to_bits(v), in_segment >= 0 ? lane - static_cast<int>(delta) : lane));
}
inline unsigned __ballot_sync(unsigned mask, int p) { return ::cuda_emu::warp_ballot(mask, p != 0); }
inline int __any_sync(unsigned mask, int p) { return ::cuda_emu::warp_ballot(mask, p != 0) != 0; }
inline int __all_sync(unsigned mask, int p) { return ::cuda_emu::warp_ballot(mask, p != 0) == mask; }

// Loads through the read-only and L2 paths: plain loads here.
template <class T> T __ldg(const T* p) { return *p; }
template <class T> T __ldcg(const T* p) { return *p; }

// Atomics: the fibers of a launch run on one host thread, so a read-modify-write is atomic among them; the
// __atomic builtins keep them atomic for two host threads launching on the same memory.
template <class T> T atomicAdd(T* p, T v) {
  if constexpr (std::is_integral<T>::value) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  } else {
    T old = *p;
    *p = old + v;
    return old;
  }
}
template <class T> T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
template <class T> T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
template <class T> T atomicMin(T* p, T v) {
  T old = *p;
  if (v < old) *p = v;
  return old;
}
template <class T> T atomicMax(T* p, T v) {
  T old = *p;
  if (v > old) *p = v;
  return old;
}
template <class T> T atomicExch(T* p, T v) {
  T old = *p;
  *p = v;
  return old;
}
template <class T> T atomicCAS(T* p, T compare, T v) {
  T old = *p;
  if (old == compare) *p = v;
  return old;
}

// Integer and bit intrinsics.
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<uint64_t>(a) * b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline unsigned __float_as_uint(float v) { return ::cuda_emu::from_bits<unsigned>(::cuda_emu::to_bits(v)); }
inline float __uint_as_float(unsigned v) { return ::cuda_emu::from_bits<float>(v); }
inline int __float_as_int(float v) { return ::cuda_emu::from_bits<int>(::cuda_emu::to_bits(v)); }
inline float __int_as_float(int v) { return ::cuda_emu::from_bits<float>(static_cast<uint32_t>(v)); }
inline long long __double_as_longlong(double v) { return ::cuda_emu::from_bits<long long>(::cuda_emu::to_bits(v)); }
inline double __longlong_as_double(long long v) { return ::cuda_emu::from_bits<double>(static_cast<uint64_t>(v)); }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __clz(int v) { return v == 0 ? 32 : __builtin_clz(static_cast<unsigned>(v)); }
inline int __ffs(int v) { return __builtin_ffs(v); }

// The device math library's unqualified min/max (CUDA's math_functions.h declares them for every
// arithmetic type).
#define REMATCH_EMU_MINMAX(T)                          \
  inline T min(T a, T b) { return b < a ? b : a; }    \
  inline T max(T a, T b) { return a < b ? b : a; }
REMATCH_EMU_MINMAX(int)
REMATCH_EMU_MINMAX(unsigned)
REMATCH_EMU_MINMAX(long)
REMATCH_EMU_MINMAX(unsigned long)
REMATCH_EMU_MINMAX(long long)
REMATCH_EMU_MINMAX(unsigned long long)
inline float min(float a, float b) { return ::fminf(a, b); }
inline float max(float a, float b) { return ::fmaxf(a, b); }
inline double min(double a, double b) { return ::fmin(a, b); }
inline double max(double a, double b) { return ::fmax(a, b); }
#undef REMATCH_EMU_MINMAX

namespace cuda_emu {
// PTX ex2.approx.ftz.f32: 2^x with subnormal inputs and results flushed to zero.
inline float ex2_approx_ftz(float x) {
  if (std::fpclassify(x) == FP_SUBNORMAL) x = 0.0f;
  const float y = ::exp2f(x);
  return std::fpclassify(y) == FP_SUBNORMAL ? 0.0f : y;
}

// ---- launches ----------------------------------------------------------------------------------------------
struct LaunchSpec {
  dim3 grid, block;
  size_t smem = 0;
  cudaStream_t stream = nullptr;
  const void* func = nullptr;
  const char* name = "";
  bool cooperative = false;
};
// Checks `spec` against the device's limits (an error is left for cudaGetLastError, as a real launch leaves
// it) and runs the grid, calling invoke(body) once per CUDA thread.
cudaError_t launch(const LaunchSpec& spec, void (*invoke)(const void*), const void* body);

template <class... P> struct KernelCall {
  void (*kernel)(P...);
  std::tuple<std::decay_t<P>...> args;
  static void invoke(const void* self) {
    const auto* call = static_cast<const KernelCall*>(self);
    std::apply(call->kernel, call->args);  // by value: every thread gets its own copy of the parameters
  }
};

// `kernel<<<grid, block, smem, stream>>>(args...)` is written `Launch(grid, block, smem, stream).run(kernel,
// "kernel")(args...)` by translate.py.
struct Launch {
  LaunchSpec spec;
  Launch(dim3 grid, dim3 block, size_t smem = 0, cudaStream_t stream = nullptr) {
    spec.grid = grid;
    spec.block = block;
    spec.smem = smem;
    spec.stream = stream;
  }
  template <class... P> struct Bound {
    LaunchSpec spec;
    void (*kernel)(P...);
    template <class... A> void operator()(A&&... a) const {
      const KernelCall<P...> call{kernel, std::tuple<std::decay_t<P>...>(std::forward<A>(a)...)};
      launch(spec, &KernelCall<P...>::invoke, &call);
    }
  };
  template <class... P> Bound<P...> run(void (*kernel)(P...), const char* name) const {
    LaunchSpec s = spec;
    s.func = reinterpret_cast<const void*>(kernel);
    s.name = name;
    return Bound<P...>{s, kernel};
  }
  // A kernel named through a lambda that calls it, so its template arguments are deduced from the launch's
  // arguments as nvcc deduces them; its attributes are keyed by the instantiation of the call.
  template <class L, class... A> struct LambdaCall {
    const L* body;
    std::tuple<A...> args;
    static void invoke(const void* self) {
      const auto* call = static_cast<const LambdaCall*>(self);
      std::apply(*call->body, call->args);
    }
  };
  template <class L> struct LambdaBound {
    LaunchSpec spec;
    L body;
    template <class... A> void operator()(A&&... a) const {
      const LambdaCall<L, std::decay_t<A>...> call{&body, std::tuple<std::decay_t<A>...>(std::forward<A>(a)...)};
      LaunchSpec s = spec;
      s.func = reinterpret_cast<const void*>(&LambdaCall<L, std::decay_t<A>...>::invoke);
      launch(s, &LambdaCall<L, std::decay_t<A>...>::invoke, &call);
    }
  };
  template <class L> LambdaBound<L> run(const char* name, L body) const {
    LaunchSpec s = spec;
    s.name = name;
    return LambdaBound<L>{s, body};
  }
};

template <class... P, size_t... I>
cudaError_t launch_cooperative(void (*kernel)(P...), dim3 grid, dim3 block, void** args, size_t smem,
                               cudaStream_t stream, std::index_sequence<I...>) {
  const KernelCall<P...> call{kernel, std::tuple<std::decay_t<P>...>(*static_cast<std::decay_t<P>*>(args[I])...)};
  LaunchSpec spec;
  spec.grid = grid;
  spec.block = block;
  spec.smem = smem;
  spec.stream = stream;
  spec.func = reinterpret_cast<const void*>(kernel);
  spec.name = "cooperative kernel";
  spec.cooperative = true;
  return launch(spec, &KernelCall<P...>::invoke, &call);
}

// Shared memory of the running block (translate.py rewrites `__shared__ T name[N];` to a reference to this).
template <class T> T& static_shared(int id) {
  return *static_cast<T*>(static_shared_memory(id, sizeof(T), alignof(T)));
}
template <class T> T* dynamic_shared() { return static_cast<T*>(dynamic_shared_memory()); }
}  // namespace cuda_emu

template <class... P>
cudaError_t cudaLaunchCooperativeKernel(void (*kernel)(P...), dim3 grid, dim3 block, void** args, size_t smem = 0,
                                        cudaStream_t stream = nullptr) {
  return cuda_emu::launch_cooperative(kernel, grid, block, args, smem, stream, std::index_sequence_for<P...>{});
}
