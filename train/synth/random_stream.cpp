#include "train/synth/random_stream.h"

#include <algorithm>
#include <numeric>

namespace rematch::synth {

double RandomStream::uniform() {
  if (next_ == block_.size()) {
    block_ = rand({kBlock}, DType::Float64, Device::cpu(), gen_).to_vector<double>();
    next_ = 0;
  }
  return block_[next_++];
}

int64_t RandomStream::below(int64_t n) {
  REMATCH_CHECK(n > 0, "RandomStream::below: n must be positive, got ", n);
  // floor(u * n) can only reach n through rounding when u is the largest double below 1.
  return std::min<int64_t>(static_cast<int64_t>(uniform() * static_cast<double>(n)), n - 1);
}

bool RandomStream::bernoulli(double p) { return uniform() < p; }

std::vector<int64_t> RandomStream::distinct(int64_t k, int64_t n) {
  REMATCH_CHECK(k >= 0 && k <= n, "RandomStream::distinct: cannot draw ", k, " distinct values from ", n);
  std::vector<int64_t> pool(static_cast<size_t>(n));
  std::iota(pool.begin(), pool.end(), int64_t{0});
  for (int64_t i = 0; i < k; ++i) std::swap(pool[i], pool[i + below(n - i)]);
  pool.resize(static_cast<size_t>(k));
  return pool;
}

}  // namespace rematch::synth
