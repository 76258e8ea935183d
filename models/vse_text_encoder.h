// RCSL's caption encoder (docs/methods/rcsl.md §3.2, QinYang79/RCSL encoders.py: EncoderText_gru). For padded word ids
// [B, L] with per-caption lengths:
//   e   = Dropout(0.1)(embed(ids))                  training mode only (the official `train=True` flag)
//   u   = (→GRU(e) + ←GRU(e)) / 2                   Bi-GRU(word_dim → E) on packed sequences, mean of directions
//   t   = Σ_l softmax_l(linear1(u))_ld · u_ld       per-dimension attention over the real words
//   g(T) = t / (‖t‖ + 1e-8)                         (skipped with no_txtnorm)
// Lengths are clamped to at least 1 as the official forward does (an empty caption reads its first, <pad>
// position). The dropout mask comes from the Philox generator, not PyTorch's.
//
// State-dict names (PyTorch order): embed.weight, rnn.{weight_ih,weight_hh,bias_ih,bias_hh}_l0[_reverse],
// linear1.{weight,bias}. Initialisation as the official module: embedding U(-0.1, 0.1) (GloVe rows are
// written over it by the caller when --word_vectors is given), GRU and linear1 PyTorch's defaults.
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

class VseTextEncoder : public nn::Module {
 public:
  // `gen` draws the initial weights and the dropout masks; it must outlive the module (nullptr: the default
  // generator).
  VseTextEncoder(int64_t vocab_size, int64_t word_dim, int64_t embed_size, double dropout = 0.1,
                 bool no_txtnorm = false, DType dtype = DType::Float32, Generator* gen = nullptr);
  static constexpr size_t kNumParams = 11;  // embed, 8 GRU tensors, linear1 weight and bias

  // ids int64 [B, L], lengths int64 [B] (host) in 0..L -> [B, embed_size].
  Tensor forward(const Tensor& ids, const Tensor& lengths);
  // The same with `params` (kNumParams tensors, named_parameters() order) in place of the module's own.
  Tensor forward_with(const TensorList& params, const Tensor& ids, const Tensor& lengths);
  // forward's two halves, for data-parallel training (docs/distributed.md §4): the word embeddings after dropout
  // [B, T, word_dim], T the longest (clamped) length (the mask drawn for the whole batch), then the Bi-GRU, the
  // attention pooling and l2n of any rows of them (words [b, T, word_dim], lengths [b]) -> [b, embed_size].
  Tensor embed_words(const Tensor& ids, const Tensor& lengths);
  Tensor encode_words(const Tensor& words, const Tensor& lengths);

  int64_t vocab_size() const { return embed_->num_embeddings(); }
  int64_t embed_size() const { return embed_size_; }
  const Tensor& word_embeddings() const { return embed_->weight(); }

 private:
  int64_t embed_size_;
  double dropout_;
  bool no_txtnorm_;
  Generator* gen_;
  std::shared_ptr<nn::Embedding> embed_;
  std::shared_ptr<nn::GRU> rnn_;
  std::shared_ptr<nn::Linear> linear1_;
};

}  // namespace rematch::models
