#include "models/padding.h"

#include "autograd/autograd.h"

namespace rematch::models {

void check_lengths(const Tensor& lengths, int64_t count, int64_t max_len, const char* who) {
  REMATCH_CHECK(lengths.defined() && lengths.dim() == 1 && lengths.dtype() == DType::Int64 &&
                    lengths.device().is_cpu() && lengths.size(0) == count,
                who, ": lengths must be int64 [", count, "] on the host, got ",
                lengths.defined() ? lengths.describe() : "undefined");
  const int64_t* len = lengths.data<int64_t>();  // a 1-D host view; contiguity is not assumed
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = len[i * lengths.stride(0)];
    REMATCH_CHECK(n >= 1 && n <= max_len, who, ": caption ", i, " has length ", n, ", outside 1..", max_len);
  }
}

Tensor word_mask(const Tensor& lengths, int64_t max_len, Device device) {
  const Tensor positions = unsqueeze(arange(max_len), 0);  // [1, L]
  return to(lt(positions, unsqueeze(lengths, 1)), device);
}

Tensor node_mask(const Tensor& lengths, int64_t max_len, Device device) {
  // Node p is real when p <= length: node 0 always, word node t + 1 when word t is.
  const Tensor positions = unsqueeze(arange(max_len + 1), 0);
  return to(le(positions, unsqueeze(lengths, 1)), device);
}

}  // namespace rematch::models
