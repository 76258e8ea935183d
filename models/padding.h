// Caption padding in the batched similarity computation (docs/backbones.md §5.1): captions of one call are
// padded to the longest, and these masks say which positions are real. Lengths count every token, the
// <start>/<end> markers included (§3.2), and live on the host as int64 [B_cap], as nn::gru takes them.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace rematch::models {

// An Error unless `lengths` is a 1-D int64 host tensor of `count` values, each in 1..max_len; `who` names the
// caller.
void check_lengths(const Tensor& lengths, int64_t count, int64_t max_len, const char* who);

// bool [B_cap, max_len] on `device`: true at the real words (t < lengths[c]).
Tensor word_mask(const Tensor& lengths, int64_t max_len, Device device = Device::cpu());

// bool [B_cap, max_len + 1] on `device`: the similarity nodes of each caption, node 0 (the global alignment,
// §4.4) and one per real word.
Tensor node_mask(const Tensor& lengths, int64_t max_len, Device device = Device::cpu());

}  // namespace rematch::models
