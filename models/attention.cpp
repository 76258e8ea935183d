#include "models/attention.h"

namespace rematch::models {

Tensor attention_weights(const Tensor& regions, const Tensor& words, const Tensor& word_mask, double smooth) {
  REMATCH_CHECK(regions.defined() && words.defined() && regions.dim() == 3 && words.dim() == 3 &&
                    regions.size(2) == words.size(2),
                "attention_weights: expected regions [B_img, R, d] and words [B_cap, L, d], got ",
                regions.defined() ? regions.describe() : "undefined", " and ",
                words.defined() ? words.describe() : "undefined");
  const int64_t n_img = regions.size(0), n_reg = regions.size(1), d = regions.size(2);
  const int64_t n_cap = words.size(0), n_word = words.size(1);
  REMATCH_CHECK(word_mask.defined() && word_mask.dtype() == DType::Bool && word_mask.sizes() == Shape({n_cap, n_word}),
                "attention_weights: word_mask must be bool [", n_cap, ", ", n_word, "], got ",
                word_mask.defined() ? word_mask.describe() : "undefined");
  // Step 1 for all pairs as one product: [B_cap·L, d] x [d, B_img·R].
  const Tensor scores =
      matmul(reshape(words, {n_cap * n_word, d}), transpose(reshape(regions, {n_img * n_reg, d}), 0, 1));
  Tensor s = permute(reshape(scores, {n_cap, n_word, n_img, n_reg}), {2, 0, 1, 3});  // [B_img, B_cap, L, R]
  s = leaky_relu(s, kAttentionLeakySlope);
  s = where(reshape(word_mask, {1, n_cap, n_word, 1}), s, zeros({}, s.dtype(), s.device()));
  s = l2_normalize(s, 2);  // over the words of the caption, per region (padding is 0 and adds nothing)
  return softmax(mul(s, smooth), 3);
}

Tensor attended_regions(const Tensor& alpha, const Tensor& regions) {
  REMATCH_CHECK(alpha.defined() && regions.defined() && alpha.dim() == 4 && regions.dim() == 3 &&
                    alpha.size(0) == regions.size(0) && alpha.size(3) == regions.size(1),
                "attended_regions: expected alpha [B_img, B_cap, L, R] and regions [B_img, R, d], got ",
                alpha.defined() ? alpha.describe() : "undefined", " and ",
                regions.defined() ? regions.describe() : "undefined");
  const int64_t n_img = alpha.size(0), n_cap = alpha.size(1), n_word = alpha.size(2), n_reg = alpha.size(3);
  const Tensor a = matmul(reshape(alpha, {n_img, n_cap * n_word, n_reg}), regions);  // [B_img, B_cap·L, d]
  return l2_normalize(reshape(a, {n_img, n_cap, n_word, regions.size(2)}), -1);
}

}  // namespace rematch::models
