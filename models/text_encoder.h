// EncoderText (docs/backbones.md §3.3): word embedding, dropout (training only), one-layer Bi-GRU run with
// packed-sequence semantics (nn::GRU), the two directions averaged (not concatenated), then l2n per word.
// State-dict names (§4.9, under "txt_enc."): embed.weight [V, word_dim]; cap_rnn.{weight_ih_l0, weight_hh_l0,
// bias_ih_l0, bias_hh_l0} and the same with "_reverse". <pad> is an ordinary embedding row: padding never
// reaches a real output because the GRU stops at each caption's length.
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

class TextEncoder : public nn::Module {
 public:
  // embed ~ U(-0.1, 0.1); the GRU keeps PyTorch's default U(-1/√H, 1/√H) (§1). `gen` draws the initial
  // values and, later, the dropout masks; it must outlive the encoder (nullptr: default_generator()).
  TextEncoder(int64_t vocab_size, int64_t word_dim, int64_t embed_size, double dropout = 0.4,
              DType dtype = DType::Float32, Generator* gen = nullptr);

  // ids int64 [B, T] (<start> ... <end>, then anything), lengths int64 [B] on the host, each in 1..T ->
  // [B, L, embed_size] with L = max(lengths): unit word vectors w_t at t < length, exact zeros after.
  Tensor forward(const Tensor& ids, const Tensor& lengths);
  Tensor operator()(const Tensor& ids, const Tensor& lengths) { return forward(ids, lengths); }
  // forward's two halves, for data-parallel training (SgrafModel::forward_columns): the embedded words after
  // dropout [B, max(lengths), word_dim] (the dropout mask drawn for the whole batch), then the Bi-GRU and l2n of
  // any rows of them (words [b, T, word_dim] with lengths [b] in 1..T) -> [b, T, embed_size].
  Tensor embed_words(const Tensor& ids, const Tensor& lengths);
  Tensor encode_words(const Tensor& words, const Tensor& lengths);

  int64_t vocab_size() const { return embed_->num_embeddings(); }
  int64_t word_dim() const { return embed_->embedding_dim(); }
  int64_t embed_size() const { return cap_rnn_->hidden_size(); }

 private:
  double dropout_;
  Generator* gen_;
  std::shared_ptr<nn::Embedding> embed_;
  std::shared_ptr<nn::GRU> cap_rnn_;
};

}  // namespace rematch::models
