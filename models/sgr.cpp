#include "models/sgr.h"

#include <limits>

#include "models/xavier_linear.h"

namespace rematch::models {

GraphReasoning::GraphReasoning(int64_t sim_dim, DType dtype, Generator* gen) {
  query_ = register_module("graph_query_w", xavier_linear(sim_dim, sim_dim, dtype, gen));
  key_ = register_module("graph_key_w", xavier_linear(sim_dim, sim_dim, dtype, gen));
  update_ = register_module("sim_graph_w", xavier_linear(sim_dim, sim_dim, dtype, gen));
}

Tensor GraphReasoning::edges(const Tensor& queries, const Tensor& nodes, const Tensor& key_padding) {
  const Tensor keys = key_->forward(nodes);                   // [P, N, m]
  const Tensor logits = bmm(queries, transpose(keys, 1, 2));  // [P, n_q, N]
  return softmax(masked_fill(logits, key_padding, -std::numeric_limits<double>::infinity()), -1);
}

Tensor GraphReasoning::forward(const Tensor& nodes, const Tensor& key_padding) {
  const Tensor a = edges(query_->forward(nodes), nodes, key_padding);
  return relu(update_->forward(bmm(a, nodes)));
}

Tensor GraphReasoning::forward_first(const Tensor& nodes, const Tensor& key_padding) {
  const Tensor query = query_->forward(narrow(nodes, 1, 0, 1));  // [P, 1, m]
  const Tensor a = edges(query, nodes, key_padding);             // [P, 1, N]
  return relu(update_->forward(squeeze(bmm(a, nodes), 1)));      // [P, m]
}

SimilarityGraphReasoning::SimilarityGraphReasoning(int64_t sim_dim, int64_t steps, DType dtype, Generator* gen)
    : sim_dim_(sim_dim) {
  REMATCH_CHECK(steps >= 1, "SGR_module: sgr_step must be at least 1, got ", steps);
  for (int64_t i = 0; i < steps; ++i)
    steps_.push_back(register_module(std::to_string(i), std::make_shared<GraphReasoning>(sim_dim, dtype, gen)));
}

Tensor SimilarityGraphReasoning::forward(const Tensor& nodes, const Tensor& node_mask) {
  REMATCH_CHECK(nodes.defined() && nodes.dim() == 4 && nodes.size(3) == sim_dim_,
                "SGR_module: expected nodes [B_img, B_cap, N, ", sim_dim_, "], got ",
                nodes.defined() ? nodes.describe() : "undefined");
  const int64_t n_img = nodes.size(0), n_cap = nodes.size(1), n_node = nodes.size(2);
  REMATCH_CHECK(node_mask.defined() && node_mask.dtype() == DType::Bool && node_mask.sizes() == Shape({n_cap, n_node}),
                "SGR_module: node_mask must be bool [", n_cap, ", ", n_node, "], got ",
                node_mask.defined() ? node_mask.describe() : "undefined");
  const int64_t pairs = n_img * n_cap;
  // Pair p = k·B_cap + c: the mask of caption c, as keys ([P, 1, N]) and as node rows ([P, N, 1]).
  const Tensor mask = reshape(expand(unsqueeze(node_mask, 0), {n_img, n_cap, n_node}), {pairs, n_node});
  const Tensor key_padding = unsqueeze(logical_not(mask), 1);
  const Tensor real_rows = unsqueeze(mask, 2);
  const Tensor zero = zeros({}, nodes.dtype(), nodes.device());
  Tensor s = reshape(nodes, {pairs, n_node, sim_dim_});
  for (size_t i = 0; i + 1 < steps_.size(); ++i) s = where(real_rows, steps_[i]->forward(s, key_padding), zero);
  return reshape(steps_.back()->forward_first(s, key_padding), {n_img, n_cap, sim_dim_});
}

}  // namespace rematch::models
