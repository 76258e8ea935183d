// A stream of seeded scalar draws for the synthetic benchmarks. Scene and caption generation make many small
// discrete choices (how many objects, which word, which template); asking the tensor RNG for one value at a
// time would allocate a tensor per draw, so this pulls Philox uniforms in blocks from a rematch::Generator and
// hands them out one by one. The sequence depends only on the generator's (seed, offset), so a seed
// reproduces a synthetic data set exactly.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tensor/random.h"

namespace rematch::synth {

class RandomStream {
 public:
  // Draws from `gen`, which must outlive the stream; the stream advances it block by block.
  explicit RandomStream(Generator& gen) : gen_(&gen) {}

  double uniform();                    // in [0, 1)
  int64_t below(int64_t n);            // uniform integer in [0, n), n > 0
  bool bernoulli(double p);            // true with probability p
  // k distinct integers from [0, n), in random order (partial Fisher–Yates).
  std::vector<int64_t> distinct(int64_t k, int64_t n);

  template <typename T> void shuffle(std::vector<T>& v) {
    for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i) std::swap(v[i], v[below(i + 1)]);
  }

 private:
  static constexpr int64_t kBlock = 4096;
  Generator* gen_;
  std::vector<double> block_;
  size_t next_ = 0;
};

}  // namespace rematch::synth
