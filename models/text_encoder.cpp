#include "models/text_encoder.h"

#include <algorithm>

#include "models/padding.h"

namespace rematch::models {

TextEncoder::TextEncoder(int64_t vocab_size, int64_t word_dim, int64_t embed_size, double dropout, DType dtype,
                         Generator* gen)
    : dropout_(dropout), gen_(gen) {
  embed_ = register_module("embed", std::make_shared<nn::Embedding>(vocab_size, word_dim, dtype, gen));
  nn::uniform_(embed_->weight(), -0.1, 0.1, gen);
  cap_rnn_ = register_module("cap_rnn", std::make_shared<nn::GRU>(word_dim, embed_size, true, dtype, gen));
}

Tensor TextEncoder::forward(const Tensor& ids, const Tensor& lengths) {
  return encode_words(embed_words(ids, lengths), lengths);
}

Tensor TextEncoder::embed_words(const Tensor& ids, const Tensor& lengths) {
  REMATCH_CHECK(ids.defined() && ids.dim() == 2 && (ids.dtype() == DType::Int64 || ids.dtype() == DType::Int32),
                "txt_enc: expected integer caption ids [B, T], got ", ids.defined() ? ids.describe() : "undefined");
  check_lengths(lengths, ids.size(0), ids.size(1), "txt_enc");
  const std::vector<int64_t> len = lengths.to_vector<int64_t>();
  const int64_t max_len = *std::max_element(len.begin(), len.end());
  // Columns past the longest caption are padding whatever they hold; dropping them keeps L = max(lengths).
  return nn::dropout(embed_->forward(narrow(ids, 1, 0, max_len)), dropout_, is_training(), gen_);
}

Tensor TextEncoder::encode_words(const Tensor& words, const Tensor& lengths) {
  const Tensor out = cap_rnn_->forward(words, lengths).output;  // [B, L, 2H], zeros at t >= length
  const int64_t h = embed_size();
  const Tensor averaged = mul(add(narrow(out, 2, 0, h), narrow(out, 2, h, h)), 0.5);
  return l2_normalize(averaged, -1);  // l2n(0) = 0 keeps the padding at zero
}

}  // namespace rematch::models
