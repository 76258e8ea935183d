#include "train/methods/mrl/mrl_losses.h"

#include "autograd/autograd.h"
#include "tensor/error.h"

namespace rematch::train::mrl {

Tensor mean_clustering_error(const Tensor& logits, const Tensor& one_hot, double tau) {
  REMATCH_CHECK(tau > 0, "mrl mean_clustering_error: tau must be positive, got ", tau);
  REMATCH_CHECK(logits.dim() == 2 && one_hot.sizes() == logits.sizes(), "mrl mean_clustering_error: logits ",
                logits.describe(), " and one-hot labels ", one_hot.describe(), " must both be [B, K]");
  // MeanClusteringError.forward: pred = softmax(input / tau); p = ((1 - q) * pred).sum(1) / pred.sum(1).
  const Tensor pred = softmax(div(logits, tau), 1);
  const Tensor off_class = sum(mul(rsub(1.0, one_hot.detach()), pred), {1});
  return mean(log(div(off_class, sum(pred, {1}))));
}

Tensor multimodal_contrastive_loss(const Tensor& z_v, const Tensor& z_t, double tau) {
  REMATCH_CHECK(tau > 0, "mrl multimodal_contrastive_loss: tau must be positive, got ", tau);
  REMATCH_CHECK(z_v.dim() == 2 && z_v.sizes() == z_t.sizes() && z_v.size(0) > 0,
                "mrl multimodal_contrastive_loss: embeddings ", z_v.describe(), " and ", z_t.describe(),
                " must both be [B, L] with B > 0");
  const int64_t b = z_v.size(0), n = 2 * b;
  const Tensor all = cat({z_v, z_t}, 0);
  // sim = (all.mm(all.t()) / tau).exp(); sim = sim - sim.diag().diag()
  const Tensor off_diagonal = rsub(1.0, eye(n, n, all.dtype(), all.device()));
  const Tensor sim = mul(exp(div(matmul(all, transpose(all, 0, 1)), tau)), off_diagonal);
  // partner[r, s] = 1 where s is r's other view: the diagonals of the official sim_sum1 / sim_sum2 blocks.
  const Tensor id = eye(b, b, all.dtype(), all.device());
  const Tensor zero = zeros({b, b}, all.dtype(), all.device());
  const Tensor partner = cat({cat({zero, id}, 1), cat({id, zero}, 1)}, 0);
  const Tensor row_sums = sum(sim, {1});
  const Tensor diag1 = sum(mul(sim, partner), {1});                       // sim[r, partner(r)]
  const Tensor diag2 = sum(mul(transpose(sim, 0, 1), partner), {1});      // sim[partner(r), r]
  const Tensor loss1 = neg(mean(log(div(diag1, row_sums))));
  const Tensor loss2 = neg(mean(log(div(diag2, row_sums))));
  return add(loss1, loss2);
}

}  // namespace rematch::train::mrl
