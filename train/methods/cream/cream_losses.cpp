#include "train/methods/cream/cream_losses.h"

#include <algorithm>

#include "autograd/autograd.h"
#include "tensor/error.h"

namespace rematch::train {
namespace {

void check_square(const char* what, const Tensor& s) {
  REMATCH_CHECK(s.defined() && s.dim() == 2 && s.size(0) == s.size(1), what,
                ": scores must be a square [B, B] matrix, got ", s.defined() ? s.describe() : "undefined");
}

void check_tau(const char* what, double tau) {
  REMATCH_CHECK(tau > 0, what, ": the temperature (--tau) must be positive, got ", tau);
}

// The diagonal of a square matrix, [B].
Tensor diagonal(const Tensor& m) {
  const int64_t n = m.size(0);
  return reshape(gather(m, 1, reshape(arange(n, DType::Int64, m.device()), {n, 1})), {n});
}

}  // namespace

Tensor cream_infonce_per_pair(const Tensor& scores, double tau) {
  check_square("cream_infonce_per_pair", scores);
  check_tau("cream_infonce_per_pair", tau);
  const Tensor logits = div(scores, tau);
  // `InfoNCELoss.forward`: loss_text_retrieval = −log(E_ii / Σ_j E_ij), loss_image_retrieval = −log(E_ii / Σ_j E_ji).
  return neg(add(diagonal(log_softmax(logits, 1)), diagonal(log_softmax(logits, 0))));
}

std::vector<double> cream_predict(const Tensor& scores, double tau) {
  check_square("cream_predict", scores);
  check_tau("cream_predict", tau);
  NoGradGuard no_grad;
  const Tensor logits = div(scores.detach(), tau);
  const Tensor p = mul(add(diagonal(softmax(logits, 1)), diagonal(softmax(logits, 0))), 0.5);
  std::vector<double> v = to(to(p, Device::cpu()), DType::Float64).to_vector<double>();
  for (double& x : v) x = std::clamp(x, 0.0, 1.0);
  return v;
}

Tensor cream_refined_loss(const Tensor& scores, const std::vector<double>& labels, double tau, double filter) {
  check_square("cream_refined_loss", scores);
  check_tau("cream_refined_loss", tau);
  const int64_t n = scores.size(0);
  REMATCH_CHECK(static_cast<int64_t>(labels.size()) == n, "cream_refined_loss: ", labels.size(),
                " labels for a batch of ", n, " pairs");
  const Tensor logits = div(scores, tau);
  const Tensor nll_t = neg(log_softmax(logits, 1)), nll_i = neg(log_softmax(logits, 0));
  const Tensor positives = eye(n, n, DType::Bool, scores.device());
  const Tensor off = masked_fill(scores, positives, 0.0);
  std::vector<double> rest(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) rest[i] = 1 - labels[i];
  const Tensor one_minus = to(to(from_vector(rest, {n}), scores.dtype()), scores.device());
  const Tensor y = to(to(from_vector(labels, {n}), scores.dtype()), scores.device());
  // weight_row = (1 − y_i)·S_ij / (Σ_j S_ij + 1e-6) (row sums of the off-diagonal S), weight_col by columns.
  Tensor w_row = mul(div(off, add(sum(off, {1}, true), 1e-6)), reshape(one_minus, {n, 1}));
  Tensor w_col = mul(div(off, add(sum(off, {0}, true), 1e-6)), reshape(one_minus, {1, n}));
  // `weight_col[weight_col < filter] = 0`: the entries (and their gradients) below the filter.
  w_row = masked_fill(w_row, lt(w_row.detach(), filter), 0.0);
  w_col = masked_fill(w_col, lt(w_col.detach(), filter), 0.0);
  const Tensor positive_weight = mul(eye(n, n, scores.dtype(), scores.device()), reshape(y, {1, n}));
  w_row = add(w_row, positive_weight);
  w_col = add(w_col, positive_weight);
  return div(sum(add(mul(nll_t, w_row), mul(nll_i, w_col))), static_cast<double>(n));
}

}  // namespace rematch::train
