// Embedding: a lookup table of `num_embeddings` vectors of size `embedding_dim` (the word embedding of the
// text encoder, docs/backbones.md §3.3). forward(ids) = embedding(weight, ids): ids of any shape (int32/int64)
// give [..., embedding_dim]; the gradient sums the rows of repeated ids.
#pragma once

#include "nn/module.h"

namespace rematch::nn {

class Embedding : public UnaryModule {
 public:
  // PyTorch's default initialisation: weight ~ N(0, 1). The backbones re-initialise it (U(-0.1, 0.1)).
  Embedding(int64_t num_embeddings, int64_t embedding_dim, DType dtype = DType::Float32, Generator* gen = nullptr);

  Tensor forward(const Tensor& ids) override;

  int64_t num_embeddings() const { return num_; }
  int64_t embedding_dim() const { return dim_; }
  const Tensor& weight() const { return weight_; }

 private:
  int64_t num_, dim_;
  std::string name_;  // "Embedding(1000, 300)", for errors
  Tensor weight_;
};

}  // namespace rematch::nn
