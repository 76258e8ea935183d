// SGR, similarity graph reasoning (docs/backbones.md §4.5): `sgr_step` GraphReasoning steps with their own
// weights over the similarity nodes S⁰ = [σ_0; σ_1; …; σ_L] of each (image, caption) pair:
//   P = S Q_nᵀ + q_n,  K = S K_nᵀ + k_n,  A = row_softmax(P Kᵀ)  (over keys, no 1/√d),
//   S' = ReLU((A S) G_nᵀ + g_n)   — no residual, no normalisation between steps;
// the output is z = S^{steps}[0], the global node after the last step, not normalised.
// Batched over B_img × B_cap pairs with captions padded to L: padded nodes are masked out of the key softmax
// (weight exactly 0, so they neither feed real nodes nor receive gradient) and zeroed after every update
// (§5.1). The last step computes its query, attention row and update for node 0 only — the only node the
// readout uses — which is exact and saves a third of SGR's work and activations.
// State-dict names (under "sim_enc.SGR_module."): <step>.graph_query_w, <step>.graph_key_w,
// <step>.sim_graph_w (Linear m→m each) for step 0..sgr_step-1, as nn.ModuleList numbers them.
#pragma once

#include <memory>
#include <vector>

#include "nn/nn.h"

namespace rematch::models {

class GraphReasoning : public nn::Module {
 public:
  // Linears Xavier-uniform with zero bias (§1).
  GraphReasoning(int64_t sim_dim, DType dtype = DType::Float32, Generator* gen = nullptr);

  // nodes [P, N, m], key_padding bool broadcastable to [P, 1, N] (true at padded nodes) -> S' [P, N, m].
  Tensor forward(const Tensor& nodes, const Tensor& key_padding);
  // Node 0 of forward() alone: [P, m].
  Tensor forward_first(const Tensor& nodes, const Tensor& key_padding);

 private:
  Tensor edges(const Tensor& queries, const Tensor& nodes, const Tensor& key_padding);  // A: [P, n_q, N]

  std::shared_ptr<nn::Linear> query_, key_, update_;
};

class SimilarityGraphReasoning : public nn::Module {
 public:
  SimilarityGraphReasoning(int64_t sim_dim, int64_t steps = 3, DType dtype = DType::Float32, Generator* gen = nullptr);

  // nodes [B_img, B_cap, N, m] (node 0 global, then one per word, N = L + 1), node_mask bool [B_cap, N]
  // (models/padding.h) -> z [B_img, B_cap, m].
  Tensor forward(const Tensor& nodes, const Tensor& node_mask);
  Tensor operator()(const Tensor& nodes, const Tensor& node_mask) { return forward(nodes, node_mask); }

  int64_t steps() const { return static_cast<int64_t>(steps_.size()); }

 private:
  int64_t sim_dim_;
  std::vector<std::shared_ptr<GraphReasoning>> steps_;
};

}  // namespace rematch::models
