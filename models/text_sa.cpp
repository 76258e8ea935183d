#include "models/text_sa.h"

#include <limits>

#include "models/xavier_linear.h"

namespace rematch::models {

TextSA::TextSA(int64_t embed_size, double dropout, DType dtype, Generator* gen) : embed_size_(embed_size) {
  using Layers = std::vector<std::shared_ptr<nn::UnaryModule>>;
  auto branch = [&] {
    return std::make_shared<nn::Sequential>(Layers{xavier_linear(embed_size, embed_size, dtype, gen),
                                                   std::make_shared<nn::Tanh>(),
                                                   std::make_shared<nn::Dropout>(dropout, gen)});
  };
  local_ = register_module("embedding_local", branch());
  global_ = register_module("embedding_global", branch());
  common_ = register_module("embedding_common",
                            std::make_shared<nn::Sequential>(Layers{xavier_linear(embed_size, 1, dtype, gen)}));
}

Tensor TextSA::forward(const Tensor& words, const Tensor& word_mask) {
  REMATCH_CHECK(words.defined() && words.dim() == 3 && words.size(2) == embed_size_,
                "t_global_w (TextSA): expected words [B_cap, L, ", embed_size_, "], got ",
                words.defined() ? words.describe() : "undefined");
  REMATCH_CHECK(word_mask.defined() && word_mask.dtype() == DType::Bool &&
                    word_mask.sizes() == Shape({words.size(0), words.size(1)}),
                "t_global_w (TextSA): word_mask must be bool [", words.size(0), ", ", words.size(1), "], got ",
                word_mask.defined() ? word_mask.describe() : "undefined");
  const Tensor mask3 = unsqueeze(word_mask, 2);  // [B, L, 1]
  const Tensor real = where(mask3, words, zeros({}, words.dtype(), words.device()));
  const Tensor count = sum(rematch::to(word_mask, words.dtype()), {1}, true);      // [B, 1]
  const Tensor mean_word = div(sum(real, {1}), count);                             // w̄ over real words only
  const Tensor local = local_->forward(words);                                     // p_t: [B, L, d]
  const Tensor global = global_->forward(mean_word);                               // q:   [B, d]
  Tensor logits = squeeze(common_->forward(mul(local, unsqueeze(global, 1))), 2);  // [B, L]
  logits = masked_fill(logits, logical_not(word_mask), -std::numeric_limits<double>::infinity());
  const Tensor gamma = softmax(logits, 1);  // 0 at padding
  return l2_normalize(sum(mul(unsqueeze(gamma, 2), real), {1}), -1);
}

}  // namespace rematch::models
