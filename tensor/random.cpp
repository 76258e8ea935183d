// Random tensors: validate, claim counters from the generator, then fill on the tensor's device. The CPU
// fill and the CUDA kernels (cuda/random.cu) evaluate the same per-element functions of tensor/philox.h.
#include "tensor/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensor/creation.h"
#include "tensor/kernels.h"
#include "tensor/philox.h"

#ifdef REMATCH_WITH_CUDA
#include "tensor/cuda/random_kernels.h"
// The CUDA fill, or (in CPU-only builds, where random.cu is not compiled) an error naming the device.
#define REMATCH_ON_CUDA(op, device, ...) __VA_ARGS__
#else
#define REMATCH_ON_CUDA(op, device, ...) \
  REMATCH_FAIL(op, ": ", (device).str(), " requested, but rematch was built without CUDA (REMATCH_CUDA=OFF)")
#endif

namespace rematch {

void Generator::manual_seed(uint64_t seed) { set_state({seed, 0}); }

uint64_t Generator::seed() const { return state().seed; }
uint64_t Generator::offset() const { return state().offset; }

GeneratorState Generator::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

void Generator::set_state(const GeneratorState& s) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = s;
}

GeneratorState Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  const GeneratorState claimed = state_;
  state_.offset += n;
  return claimed;
}

Generator& default_generator() {
  static Generator gen;
  return gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

namespace {

Generator& pick(Generator* gen) { return gen ? *gen : default_generator(); }

// f(i) for i in [0, n); OpenMP only where the work outweighs starting the threads.
template <typename F> void parallel_for(int64_t n, const F& f) {
#pragma omp parallel for schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) f(i);
}

void check_float_dtype(const char* op, DType dtype) {
  REMATCH_CHECK(is_floating(dtype), op, ": dtype must be float32 or float64, got ", dtype_name(dtype));
}

void check_probability(const char* op, double p) {
  REMATCH_CHECK(p >= 0.0 && p <= 1.0, op, ": probability p = ", p, " is outside [0, 1]");
}

// The bool tensor of bernoulli draws against per-element probabilities on the host.
template <typename T> void bernoulli_host(bool* out, const T* p, int64_t n, const GeneratorState& s) {
  parallel_for(n, [&](int64_t i) {
    out[i] = philox::bernoulli(philox::element_block(s.seed, s.offset, static_cast<uint64_t>(i)),
                               static_cast<double>(p[i]));
  });
}

#ifdef REMATCH_WITH_CUDA
void bernoulli_cuda(const Tensor& out, const Tensor& probs, Generator& gen) {
  const int64_t n = out.numel();
  const int dev = probs.device().index;
  // Validated before counters are claimed, so a rejected call leaves the generator untouched.
  REMATCH_CHECK(cuda::probabilities_valid(probs.raw_data(), probs.dtype(), n, dev), "bernoulli: probabilities ",
                probs.describe(), " hold a value outside [0, 1]");
  const GeneratorState s = gen.reserve(static_cast<uint64_t>(n));
  cuda::philox_bernoulli_tensor(static_cast<bool*>(out.raw_data()), probs.raw_data(), probs.dtype(), n, s.seed,
                                s.offset, dev);
}
#endif

}  // namespace

Tensor rand(const Shape& shape, DType dtype, Device device, Generator* gen) {
  check_float_dtype("rand", dtype);
  Tensor out = empty(shape, dtype, device);
  const int64_t n = out.numel();
  if (n == 0) return out;
  const GeneratorState s = pick(gen).reserve(static_cast<uint64_t>(n));
  if (device.is_cuda()) {
    REMATCH_ON_CUDA("rand", device, cuda::philox_uniform(out.raw_data(), dtype, n, s.seed, s.offset, device.index));
    return out;
  }
  dispatch_float("rand", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    parallel_for(n, [&](int64_t i) {
      const philox::Block b = philox::element_block(s.seed, s.offset, static_cast<uint64_t>(i));
      if constexpr (std::is_same_v<T, float>) p[i] = philox::uniform_float(b.w[0]);
      else p[i] = philox::uniform_double(b.w[0], b.w[1]);
    });
  });
  return out;
}

Tensor randn(const Shape& shape, DType dtype, Device device, Generator* gen) {
  check_float_dtype("randn", dtype);
  Tensor out = empty(shape, dtype, device);
  const int64_t n = out.numel();
  if (n == 0) return out;
  const GeneratorState s = pick(gen).reserve(static_cast<uint64_t>(n));
  if (device.is_cuda()) {
    REMATCH_ON_CUDA("randn", device, cuda::philox_normal(out.raw_data(), dtype, n, s.seed, s.offset, device.index));
    return out;
  }
  dispatch_float("randn", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    parallel_for(n, [&](int64_t i) {
      const philox::Block b = philox::element_block(s.seed, s.offset, static_cast<uint64_t>(i));
      if constexpr (std::is_same_v<T, float>) p[i] = philox::normal_float(b);
      else p[i] = philox::normal_double(b);
    });
  });
  return out;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device, Generator* gen) {
  REMATCH_CHECK(low < high, "randint: low (", low, ") must be less than high (", high, ")");
  REMATCH_CHECK(is_index_dtype(dtype), "randint: dtype must be int32 or int64, got ", dtype_name(dtype));
  if (dtype == DType::Int32)
    REMATCH_CHECK(low >= std::numeric_limits<int32_t>::min() && high - 1 <= std::numeric_limits<int32_t>::max(),
                  "randint: range [", low, ", ", high, ") does not fit int32");
  Tensor out = empty(shape, dtype, device);
  const int64_t n = out.numel();
  if (n == 0) return out;
  // Unsigned difference: high - low may exceed INT64_MAX when the range spans most of int64.
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const GeneratorState s = pick(gen).reserve(static_cast<uint64_t>(n));
  if (device.is_cuda()) {
    REMATCH_ON_CUDA("randint", device,
                    cuda::philox_randint(out.raw_data(), dtype, n, low, range, s.seed, s.offset, device.index));
    return out;
  }
  dispatch_index("randint", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    parallel_for(n, [&](int64_t i) {
      const philox::Block b = philox::element_block(s.seed, s.offset, static_cast<uint64_t>(i));
      p[i] = static_cast<T>(philox::randint(b, low, range));
    });
  });
  return out;
}

Tensor bernoulli(const Shape& shape, double p, Device device, Generator* gen) {
  check_probability("bernoulli", p);
  Tensor out = empty(shape, DType::Bool, device);
  const int64_t n = out.numel();
  if (n == 0) return out;
  const GeneratorState s = pick(gen).reserve(static_cast<uint64_t>(n));
  if (device.is_cuda()) {
    REMATCH_ON_CUDA("bernoulli", device,
                    cuda::philox_bernoulli(static_cast<bool*>(out.raw_data()), n, p, s.seed, s.offset, device.index));
    return out;
  }
  bool* o = out.data<bool>();
  parallel_for(n, [&](int64_t i) {
    o[i] = philox::bernoulli(philox::element_block(s.seed, s.offset, static_cast<uint64_t>(i)), p);
  });
  return out;
}

Tensor bernoulli(const Tensor& p, Generator* gen) {
  REMATCH_CHECK(p.defined(), "bernoulli: undefined probability tensor");
  check_float_dtype("bernoulli", p.dtype());
  const Tensor probs = kernels::contiguous(p);
  Tensor out = empty(p.sizes(), DType::Bool, p.device());
  const int64_t n = out.numel();
  if (n == 0) return out;
  if (p.device().is_cuda()) {
    REMATCH_ON_CUDA("bernoulli", p.device(), bernoulli_cuda(out, probs, pick(gen)));
    return out;
  }
  dispatch_float("bernoulli", p.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pv = probs.data<T>();
    for (int64_t i = 0; i < n; ++i)
      REMATCH_CHECK(pv[i] >= T(0) && pv[i] <= T(1), "bernoulli: probabilities ", p.describe(), " hold ", pv[i],
                    " at flat index ", i, ", outside [0, 1]");
    bernoulli_host(out.data<bool>(), pv, n, pick(gen).reserve(static_cast<uint64_t>(n)));
  });
  return out;
}

Tensor randperm(int64_t n, Device device, Generator* gen) {
  REMATCH_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  Tensor out = empty({n}, DType::Int64, device);
  if (n == 0) return out;
  const GeneratorState s = pick(gen).reserve(static_cast<uint64_t>(n));
  if (device.is_cuda()) {
    REMATCH_ON_CUDA("randperm", device,
                    cuda::philox_randperm(static_cast<int64_t*>(out.raw_data()), n, s.seed, s.offset, device.index));
    return out;
  }
  // (key, index) pairs sort lexicographically: by key, equal keys by index — the order a stable radix sort
  // of keys with ascending indices as values produces, so the CUDA path can reproduce it.
  std::vector<std::pair<uint64_t, int64_t>> keyed(static_cast<size_t>(n));
  parallel_for(n, [&](int64_t i) {
    keyed[static_cast<size_t>(i)] = {
        philox::perm_key(philox::element_block(s.seed, s.offset, static_cast<uint64_t>(i))), i};
  });
  std::sort(keyed.begin(), keyed.end());
  int64_t* o = out.data<int64_t>();
  parallel_for(n, [&](int64_t i) { o[i] = keyed[static_cast<size_t>(i)].second; });
  return out;
}

}  // namespace rematch
