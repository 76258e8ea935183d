// SAF, similarity attention filtration (docs/backbones.md §4.6), over the similarity nodes S⁰ of each pair:
//   u_p = w_f · S⁰_p + b_f;  û = BN1(u);  β_p = sigmoid(û_p);  β̃ = β / (Σ_q β_q + 1e-8);  z = l2n(Σ_p β̃_p S⁰_p).
// BN1 is BatchNorm1d(1) applied, in the official code, inside the caption loop to that caption's
// [B_img, 1, L+1] tensor. So in training each caption c is normalised with its own statistics over its
// B_img images × L_c + 1 real nodes (biased variance), and the running statistics move once per caption,
// in caption order, with the unbiased variance (n = B_img·(L_c + 1)); num_batches_tracked grows by B_cap.
// Batched here with padded nodes masked out of the statistics, of β and of the l1 sum (§5.1); the running
// statistics are updated sequentially, caption by caption, exactly as the loop does. Eval mode uses them.
// State-dict names (under "sim_enc.SAF_module."): attn_sim_w (Linear m→1), bn (BatchNorm1d(1)).
#pragma once

#include <functional>
#include <memory>

#include "nn/nn.h"

namespace rematch::models {

class AttentionFiltration : public nn::Module {
 public:
  // attn_sim_w Xavier-uniform with zero bias; bn γ = 1, β = 0, running mean 0, var 1 (§1).
  AttentionFiltration(int64_t sim_dim, DType dtype = DType::Float32, Generator* gen = nullptr);

  // nodes [B_img, B_cap, N, m], node_mask bool [B_cap, N] (models/padding.h) -> z [B_img, B_cap, m].
  Tensor forward(const Tensor& nodes, const Tensor& node_mask);
  Tensor operator()(const Tensor& nodes, const Tensor& node_mask) { return forward(nodes, node_mask); }

  // Data-parallel training (SgrafModel::forward_columns, docs/distributed.md §4): a call sees only this rank's
  // captions. `gather` takes their statistics, float64 [B_cap, 3] (mean, biased variance, count) on the host, to
  // those of every caption of the batch in caption order, so the running statistics move over the whole batch
  // as one process moves them. Empty (the default): the call's captions are the batch.
  void set_statistics_gather(std::function<Tensor(const Tensor&)> gather) { gather_ = std::move(gather); }
  bool gathers_statistics() const { return static_cast<bool>(gather_); }

 private:
  // û for every pair and node with per-caption batch statistics, updating the running ones.
  Tensor normalise_training(const Tensor& u, const Tensor& real);

  int64_t sim_dim_;
  std::shared_ptr<nn::Linear> attn_;
  std::shared_ptr<nn::BatchNorm1d> bn_;
  std::function<Tensor(const Tensor&)> gather_;
};

}  // namespace rematch::models
