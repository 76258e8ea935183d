#include "models/vse_pooling.h"

#include <algorithm>

namespace rematch::models {

Tensor vse_padding_mask(const Tensor& lengths, int64_t steps, Device device) {
  const Tensor len = kernels::to_device(lengths, device);
  const Tensor positions = arange(steps, DType::Int64, device);  // [T]
  // positions[t] >= len[b]  ->  [B, T], then a trailing axis that broadcasts over the embedding dims.
  return unsqueeze(ge(unsqueeze(positions, 0), unsqueeze(len, 1)), 2);
}

Tensor vse_attention_pool(const Tensor& features, const Tensor& logits, const Tensor& padding) {
  REMATCH_CHECK(features.dim() == 3 && logits.sizes() == features.sizes(), "vse_attention_pool: features ",
                features.describe(), " and logits ", logits.describe(), " must both be [B, T, E]");
  REMATCH_CHECK(padding.dim() == 3 && padding.size(0) == features.size(0) && padding.size(1) == features.size(1) &&
                    padding.size(2) == 1,
                "vse_attention_pool: padding mask ", padding.describe(), " must be [B, T, 1] for features ",
                features.describe());
  // encoders.py: masked_fill(mask == 0, -10000), softmax over dim 1, masked_fill(mask == 0, 0). The max shift
  // the official code subtracts first is what softmax does internally; the second fill is already exact.
  const Tensor weights = softmax(masked_fill(logits, padding, -10000.0), 1);
  return sum(mul(weights, features), {1});
}

int64_t checked_max_length(const Tensor& lengths, int64_t batch, int64_t limit, const char* who) {
  REMATCH_CHECK(lengths.defined() && lengths.dtype() == DType::Int64 && lengths.dim() == 1 &&
                    lengths.size(0) == batch,
                who, ": lengths must be int64 [", batch, "], got ",
                lengths.defined() ? lengths.describe() : "undefined");
  const std::vector<int64_t> v = lengths.to_vector<int64_t>();
  for (size_t b = 0; b < v.size(); ++b)
    REMATCH_CHECK(v[b] >= 1 && v[b] <= limit, who, ": lengths[", b, "] = ", v[b], " is out of range 1..", limit);
  return *std::max_element(v.begin(), v.end());
}

}  // namespace rematch::models
