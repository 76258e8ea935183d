// VisualSA (docs/backbones.md §4.1): the global image vector from self-attention over the regions.
//   v̄ = mean_r v_r;  p_r = Dropout(tanh(BN_R(W_1 v_r + b_1)));  g = Dropout(tanh(BN_d(W_2 v̄ + b_2)));
//   β = softmax_r(w_3 · (p_r ⊙ g) + b_3);  v^g = l2n(Σ_r β_r v_r)   (the original unit regions, not p_r).
// BN_R = BatchNorm1d(R) on [B_img, R, d]: its channels are the region *slots*, so in training slot r is
// normalised over all images of the call × all d features; BN_d is an ordinary BatchNorm1d(d) over the images.
// One running-statistics update per forward call (the official code calls it once per similarity call).
// State-dict names (under "sim_enc.v_global_w."): embedding_local.0 (Linear d→d), embedding_local.1
// (BatchNorm1d(R)), embedding_global.0 (Linear d→d), embedding_global.1 (BatchNorm1d(d)), embedding_common.0
// (Linear d→1) — torch.nn.Sequential numbering, Tanh and Dropout holding no state.
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

class VisualSA : public nn::Module {
 public:
  // Linears Xavier-uniform with zero bias, BatchNorms γ = 1, β = 0 (§1). `gen` (nullptr: default_generator())
  // draws the initial weights and the dropout masks and must outlive the module.
  VisualSA(int64_t embed_size, int64_t num_regions, double dropout = 0.4, DType dtype = DType::Float32,
           Generator* gen = nullptr);

  // regions [B_img, R, d] (unit vectors from the image encoder) -> v^g [B_img, d]. Training needs
  // B_img >= 2 (BN_d has one value per image and feature).
  Tensor forward(const Tensor& regions);
  Tensor operator()(const Tensor& regions) { return forward(regions); }

  int64_t num_regions() const { return num_regions_; }

 private:
  int64_t embed_size_, num_regions_;
  std::shared_ptr<nn::Sequential> local_, global_, common_;
};

}  // namespace rematch::models
