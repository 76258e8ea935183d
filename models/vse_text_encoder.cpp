#include "models/vse_text_encoder.h"

#include <algorithm>

#include "models/vse_pooling.h"

namespace rematch::models {

VseTextEncoder::VseTextEncoder(int64_t vocab_size, int64_t word_dim, int64_t embed_size, double dropout,
                               bool no_txtnorm, DType dtype, Generator* gen)
    : embed_size_(embed_size), dropout_(dropout), no_txtnorm_(no_txtnorm), gen_(gen) {
  REMATCH_CHECK(dropout >= 0 && dropout < 1, "VseTextEncoder: dropout must be in [0, 1), got ", dropout);
  embed_ = register_module("embed", std::make_shared<nn::Embedding>(vocab_size, word_dim, dtype, gen));
  rnn_ = register_module("rnn", std::make_shared<nn::GRU>(word_dim, embed_size, true, dtype, gen));
  linear1_ = register_module("linear1", std::make_shared<nn::Linear>(embed_size, embed_size, true, dtype, gen));
  nn::uniform_(embed_->weight(), -0.1, 0.1, gen);  // EncoderText_gru.init_weights without GloVe
}

Tensor VseTextEncoder::forward(const Tensor& ids, const Tensor& lengths) {
  return forward_with(parameters(), ids, lengths);
}

namespace {

// encoders.py: lengths.clamp(min=1).
Tensor clamped_lengths(const Tensor& lengths) {
  std::vector<int64_t> len = lengths.to_vector<int64_t>();
  for (int64_t& l : len) l = std::max<int64_t>(l, 1);
  return from_vector(len);
}

}  // namespace

Tensor VseTextEncoder::embed_words(const Tensor& ids, const Tensor& lengths) {
  const Tensor clamped = clamped_lengths(lengths);
  const int64_t T = checked_max_length(clamped, ids.size(0), ids.size(1), "VseTextEncoder");
  Tensor e = embedding(embed_->weight(), T < ids.size(1) ? narrow(ids, 1, 0, T) : ids);  // [B, T, word_dim]
  if (is_training() && dropout_ > 0) e = nn::dropout(e, dropout_, true, gen_);
  return e;
}

Tensor VseTextEncoder::encode_words(const Tensor& words, const Tensor& lengths) {
  const Tensor clamped = clamped_lengths(lengths);
  checked_max_length(clamped, words.size(0), words.size(1), "VseTextEncoder");
  const TensorList params = parameters();
  const TensorList gru_weights(params.begin() + 1, params.begin() + 9);
  const Tensor out = nn::gru(words, clamped, gru_weights, "VseTextEncoder rnn").output;  // [b, T, 2E], 0 at padding
  const int64_t E = embed_size_, T = words.size(1);
  const Tensor u = mul(add(narrow(out, 2, 0, E), narrow(out, 2, E, E)), 0.5);
  const Tensor logits = nn::linear(u, params[9], params[10], "VseTextEncoder linear1");
  const Tensor pooled = vse_attention_pool(u, logits, vse_padding_mask(clamped, T, u.device()));
  return no_txtnorm_ ? pooled : l2_normalize(pooled, 1, 1e-8);
}

Tensor VseTextEncoder::forward_with(const TensorList& params, const Tensor& ids, const Tensor& lengths) {
  REMATCH_CHECK(params.size() == kNumParams, "VseTextEncoder: expected ", kNumParams, " parameter tensors, got ",
                params.size());
  REMATCH_CHECK(ids.defined() && ids.dtype() == DType::Int64 && ids.dim() == 2 && ids.size(1) >= 1,
                "VseTextEncoder: ids must be int64 [B, L] with L >= 1, got ",
                ids.defined() ? ids.describe() : "undefined");
  REMATCH_CHECK(lengths.defined() && lengths.dtype() == DType::Int64 && lengths.dim() == 1,
                "VseTextEncoder: lengths must be int64 [B], got ",
                lengths.defined() ? lengths.describe() : "undefined");
  // encoders.py: lengths.clamp(min=1).
  std::vector<int64_t> len = lengths.to_vector<int64_t>();
  for (int64_t& l : len) l = std::max<int64_t>(l, 1);
  const Tensor clamped = from_vector(len);
  const int64_t B = ids.size(0);
  const int64_t T = checked_max_length(clamped, B, ids.size(1), "VseTextEncoder");

  Tensor e = embedding(params[0], T < ids.size(1) ? narrow(ids, 1, 0, T) : ids);  // [B, T, word_dim]
  if (is_training() && dropout_ > 0) e = nn::dropout(e, dropout_, true, gen_);
  const TensorList gru_weights(params.begin() + 1, params.begin() + 9);
  const Tensor out = nn::gru(e, clamped, gru_weights, "VseTextEncoder rnn").output;  // [B, T, 2E], 0 at padding
  const int64_t E = embed_size_;
  const Tensor u = mul(add(narrow(out, 2, 0, E), narrow(out, 2, E, E)), 0.5);     // mean of the two directions
  const Tensor logits = nn::linear(u, params[9], params[10], "VseTextEncoder linear1");
  const Tensor pooled = vse_attention_pool(u, logits, vse_padding_mask(clamped, T, u.device()));
  return no_txtnorm_ ? pooled : l2_normalize(pooled, 1, 1e-8);
}

}  // namespace rematch::models
