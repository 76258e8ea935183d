// The per-dimension attention pooling shared by RCSL's two VSE encoders (docs/methods/rcsl.md §3.2, QinYang79/RCSL
// encoders.py: EncoderImageAggr.forward and EncoderText_gru.forward). For features h [B, T, E], attention
// logits a = Linear(E→E)(h) [B, T, E] and per-item lengths:
//   w_btd = softmax over the valid steps t < len_b of a_btd   (one softmax per item b and dimension d)
//   pooled_bd = Σ_t w_btd · h_btd
// It is not GPO (the official file defines a GPO class but neither encoder uses it): the weights come from
// the features themselves, one distribution per embedding dimension, with no sorting.
#pragma once

#include "autograd/autograd.h"

namespace rematch::models {

// Bool [B, T, 1], true at the padding steps t >= lengths[b]. `lengths` is int64 [B] (any device); the mask
// lives on `device`.
Tensor vse_padding_mask(const Tensor& lengths, int64_t steps, Device device);

// features, logits [B, T, E]; padding [B, T, 1] from vse_padding_mask -> [B, E]. The padded logits are filled
// with -10000 before the softmax, as the official code does (exp(-10000 - max) underflows to exactly 0 in
// float32 and float64 while at least one step is valid), so they carry neither weight nor gradient.
Tensor vse_attention_pool(const Tensor& features, const Tensor& logits, const Tensor& padding);

// The largest entry of an int64 length vector, after checking every entry is in 1..limit; `who` names the
// caller in the error.
int64_t checked_max_length(const Tensor& lengths, int64_t batch, int64_t limit, const char* who);

}  // namespace rematch::models
