// Random tensors from one counter-based generator (Philox 4x32-10, tensor/philox.h). A Generator is just
// (seed, offset): a call that makes n values uses the Philox counters offset .. offset + n - 1 and then
// advances the offset by n. The numbers depend only on (seed, offset, element index), never on the device or
// the thread count, so a seed reproduces a run on CPU and CUDA alike, and saving (seed, offset) in a
// checkpoint resumes the exact stream.
#pragma once

#include <cstdint>
#include <mutex>

#include "tensor/tensor_core.h"

namespace rematch {

struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default, for familiarity

  explicit Generator(uint64_t seed = kDefaultSeed) : state_{seed, 0} {}

  // Restarts the stream: the given seed, offset 0.
  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  uint64_t offset() const;
  GeneratorState state() const;
  void set_state(const GeneratorState& s);
  // Claims n counters for one call: returns the state to generate them with and advances the offset.
  // Thread-safe, so concurrent calls get disjoint counter ranges.
  GeneratorState reserve(uint64_t n);

 private:
  mutable std::mutex mutex_;
  GeneratorState state_;
};

// The process-wide generator used when a function is given no generator.
Generator& default_generator();
// default_generator().manual_seed(seed).
void manual_seed(uint64_t seed);

// Uniform in [0, 1); dtype float32 or float64.
Tensor rand(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu(),
            Generator* gen = nullptr);
// Standard normal (Box–Muller); dtype float32 or float64.
Tensor randn(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu(),
             Generator* gen = nullptr);
// Integers in [low, high); dtype int32 or int64 (both bounds must fit the dtype).
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::Int64,
               Device device = Device::cpu(), Generator* gen = nullptr);
// Bool tensor, each element true with probability p in [0, 1].
Tensor bernoulli(const Shape& shape, double p, Device device = Device::cpu(), Generator* gen = nullptr);
// Bool tensor shaped like `p` (float32 or float64 probabilities in [0, 1]), on p's device.
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
// A random permutation of 0 .. n-1 (int64): the argsort of n random 64-bit keys, ties broken by index.
Tensor randperm(int64_t n, Device device = Device::cpu(), Generator* gen = nullptr);

}  // namespace rematch
