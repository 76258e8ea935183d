#include "models/saf.h"

#include "models/xavier_linear.h"

namespace rematch::models {

AttentionFiltration::AttentionFiltration(int64_t sim_dim, DType dtype, Generator* gen) : sim_dim_(sim_dim) {
  attn_ = register_module("attn_sim_w", xavier_linear(sim_dim, 1, dtype, gen));
  bn_ = register_module("bn", std::make_shared<nn::BatchNorm1d>(1, 1e-5, 0.1, true, dtype));
}

Tensor AttentionFiltration::normalise_training(const Tensor& u, const Tensor& real) {
  // u [B_img, B_cap, N]; real: the node mask as 0/1 of u's dtype, [1, B_cap, N].
  const int64_t n_img = u.size(0);
  const Tensor count = mul(sum(real, {0, 2}, true), static_cast<double>(n_img));  // B_img·(L_c + 1): [1, B_cap, 1]
  const Tensor mu = div(sum(mul(u, real), {0, 2}, true), count);
  const Tensor centred = mul(sub(u, mu), real);
  const Tensor var = div(sum(square(centred), {0, 2}, true), count);  // biased, as BN normalises
  {
    // The official loop calls BN once per caption: rm ← (1−m)·rm + m·μ_c, rv ← (1−m)·rv + m·v_c·n_c/(n_c−1),
    // in caption order. A handful of scalars, so it runs on the host in double.
    NoGradGuard no_grad;
    std::vector<double> mus = mu.to_vector<double>(), vars = var.to_vector<double>();
    std::vector<double> counts = count.to_vector<double>();
    if (gather_) {  // this rank's captions -> the batch's, in caption order
      std::vector<double> mine;
      for (size_t c = 0; c < mus.size(); ++c) mine.insert(mine.end(), {mus[c], vars[c], counts[c]});
      const std::vector<double> all =
          gather_(from_vector(mine, {static_cast<int64_t>(mus.size()), 3})).to_vector<double>();
      mus.clear(), vars.clear(), counts.clear();
      for (size_t i = 0; i + 2 < all.size(); i += 3) mus.push_back(all[i]), vars.push_back(all[i + 1]), counts.push_back(all[i + 2]);
    }
    const Tensor& running_mean = bn_->buffer("running_mean");
    const Tensor& running_var = bn_->buffer("running_var");
    double rm = running_mean.item<double>(), rv = running_var.item<double>();
    const double m = bn_->momentum();
    for (size_t c = 0; c < mus.size(); ++c) {
      rm = (1 - m) * rm + m * mus[c];
      rv = (1 - m) * rv + m * vars[c] * counts[c] / (counts[c] - 1);
    }
    kernels::fill_(running_mean, rm);
    kernels::fill_(running_var, rv);
    const Tensor& tracked = bn_->buffer("num_batches_tracked");
    kernels::fill_(tracked, static_cast<double>(tracked.item<int64_t>() + static_cast<int64_t>(mus.size())));
  }
  return mul(sub(u, mu), rsqrt(add(var, bn_->eps())));
}

Tensor AttentionFiltration::forward(const Tensor& nodes, const Tensor& node_mask) {
  REMATCH_CHECK(nodes.defined() && nodes.dim() == 4 && nodes.size(3) == sim_dim_,
                "SAF_module: expected nodes [B_img, B_cap, N, ", sim_dim_, "], got ",
                nodes.defined() ? nodes.describe() : "undefined");
  const int64_t n_img = nodes.size(0), n_cap = nodes.size(1), n_node = nodes.size(2);
  REMATCH_CHECK(node_mask.defined() && node_mask.dtype() == DType::Bool && node_mask.sizes() == Shape({n_cap, n_node}),
                "SAF_module: node_mask must be bool [", n_cap, ", ", n_node, "], got ",
                node_mask.defined() ? node_mask.describe() : "undefined");
  const Tensor mask = unsqueeze(node_mask, 0);  // [1, B_cap, N]
  const Tensor real = rematch::to(mask, nodes.dtype());
  const Tensor u = squeeze(attn_->forward(nodes), 3);  // [B_img, B_cap, N]
  // BN1: batch statistics per caption in training, the running ones (constants of the graph) in eval.
  Tensor u_hat = is_training()
                     ? normalise_training(u, real)
                     : mul(sub(u, bn_->buffer("running_mean")), rsqrt(add(bn_->buffer("running_var"), bn_->eps())));
  u_hat = add(mul(u_hat, bn_->parameter("weight")), bn_->parameter("bias"));
  // β = sigmoid(û) on real nodes, 0 on padded ones, then l1-normalised over the nodes (eps 1e-8, §1).
  const Tensor beta = l1_normalize(where(mask, sigmoid(u_hat), zeros({}, u.dtype(), u.device())), -1);
  const int64_t pairs = n_img * n_cap;
  const Tensor pooled = bmm(reshape(beta, {pairs, 1, n_node}), reshape(nodes, {pairs, n_node, sim_dim_}));
  return l2_normalize(reshape(pooled, {n_img, n_cap, sim_dim_}), -1);
}

}  // namespace rematch::models
