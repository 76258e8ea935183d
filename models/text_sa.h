// TextSA (docs/backbones.md §4.2): the global text vector from self-attention over a caption's real words.
//   w̄ = mean over real t of w_t;  p_t = Dropout(tanh(U_1 w_t + c_1));  q = Dropout(tanh(U_2 w̄ + c_2));
//   γ = softmax over real t of (u_3 · (p_t ⊙ q) + c_3);  t^g = l2n(Σ_t γ_t w_t).
// The official code runs it per caption on the caption sliced to its length; here a padded batch is run at
// once with padding masked in the mean and the softmax (§5.1), which gives the same vector per caption.
// State-dict names (under "sim_enc.t_global_w."): embedding_local.0, embedding_global.0 (Linear d→d, then
// Tanh and Dropout as children 1 and 2), embedding_common.0 (Linear d→1). No BatchNorm.
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

class TextSA : public nn::Module {
 public:
  // Linears Xavier-uniform with zero bias (§1); `gen` as in VisualSA.
  TextSA(int64_t embed_size, double dropout = 0.4, DType dtype = DType::Float32, Generator* gen = nullptr);

  // words [B_cap, L, d], word_mask bool [B_cap, L] (models/padding.h; every caption has a real word) ->
  // t^g [B_cap, d]. Values at padded positions do not matter: they get weight 0 and gradient 0.
  Tensor forward(const Tensor& words, const Tensor& word_mask);
  Tensor operator()(const Tensor& words, const Tensor& word_mask) { return forward(words, word_mask); }

 private:
  int64_t embed_size_;
  std::shared_ptr<nn::Sequential> local_, global_, common_;
};

}  // namespace rematch::models
