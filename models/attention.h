// Text-to-image attention (docs/backbones.md §4.3, SCAN_attention with smooth = 9) for every (image, caption)
// pair of a call at once. For image k, caption c, region r and real word t:
//   s_{r,t} = v_r · w_t;   ŝ = LeakyReLU_0.1(s);   s̄_{r,t} = ŝ_{r,t} / (√(Σ_{t' real} ŝ_{r,t'}²) + 1e-8);
//   α_{t,r} = softmax_r(9 · s̄_{r,t});   a_t = l2n(Σ_r α_{t,r} v_r).
// Step 3 normalises each region's row over the caption's *real* words only: the official code slices the
// caption to its length first, so padding is masked out of that norm here (§5.1).
#pragma once

#include "autograd/autograd.h"

namespace rematch::models {

constexpr double kAttentionLeakySlope = 0.1;  // LeakyReLU slope of step 2 (§9 item 2: not the paper's ReLU)
constexpr double kAttentionSmooth = 9.0;      // λ of step 4

// regions [B_img, R, d], words [B_cap, L, d], word_mask bool [B_cap, L] -> α [B_img, B_cap, L, R]
// (softmax over the last dim). Rows of padded words hold a uniform distribution that nothing downstream
// may use; they receive no gradient from a consumer that ignores them.
Tensor attention_weights(const Tensor& regions, const Tensor& words, const Tensor& word_mask,
                         double smooth = kAttentionSmooth);

// α [B_img, B_cap, L, R], regions [B_img, R, d] -> a [B_img, B_cap, L, d], the attended image vector of every
// word (step 5). It materialises a pair-level d-wide tensor; the similarity encoder uses the fused
// local_similarity (models/local_similarity.h) instead, and this stays for small batches and tests.
Tensor attended_regions(const Tensor& alpha, const Tensor& regions);

}  // namespace rematch::models
