#include "train/methods/crcl/crcl_loss.h"

#include <cmath>

#include "autograd/autograd.h"
#include "tensor/error.h"

namespace rematch::train {
namespace {

constexpr double kEps = 1e-10;    // CRCL.train_self: `eps = 1e-10`
constexpr int kTanDepth = 10;

// [B]: x[i][i].
Tensor diagonal(const Tensor& x) {
  const int64_t n = x.size(0);
  return reshape(gather(x, 1, reshape(arange(n, DType::Int64, x.device()), {n, 1})), {n});
}

// p / (row sum + ε), as `sims_ / (torch.sum(sims_, dim=1, keepdim=True) + eps)`.
Tensor normalise_rows(const Tensor& e) { return div(e, add(sum(e, {1}, true), kEps)); }

// Σ_{j≠i} tan(P_ij) / (Σ_j tan(P_ij))^(1−y_i), per row i: `(p.tan() * (1 - y_hard)).sum(1) / (p.tan().sum(1) ** (1 - y))`.
Tensor negative_term(const Tensor& P, const Tensor& one_minus_y, const Tensor& off_diagonal) {
  const Tensor t = crcl_tan(P);
  const Tensor numerator = sum(mul(t, off_diagonal), {1});
  // a^(1−y) = exp((1−y)·log a): the exponent is a constant per row (a > 0: every p > 0).
  const Tensor denominator = exp(mul(log(sum(t, {1})), one_minus_y));
  return div(numerator, denominator);
}

}  // namespace

Tensor crcl_tan(const Tensor& x) {
  const Tensor x2 = square(x);
  Tensor t = full_like(x, 2.0 * kTanDepth + 1);
  for (int k = kTanDepth; k >= 1; --k) t = rsub(2.0 * k - 1, div(x2, t));
  return div(x, t);
}

CrclProbabilities crcl_probabilities(const Tensor& scores, double tau) {
  REMATCH_CHECK(scores.defined() && scores.dim() == 2 && scores.size(0) == scores.size(1) && scores.size(0) > 0,
                "crcl: scores must be a square [B, B] matrix, got ", scores.defined() ? scores.describe() : "undefined");
  REMATCH_CHECK(std::isfinite(tau) && tau > 0, "crcl: --tau must be positive, got ", tau);
  const Tensor e = exp(div(scores, tau));
  CrclProbabilities r;
  r.i2t = normalise_rows(e);
  r.t2i = normalise_rows(transpose(e, 0, 1));
  {
    NoGradGuard no_grad;
    const Tensor p = mul(add(diagonal(r.i2t), diagonal(r.t2i)), 0.5);
    r.p = to(to(p, Device::cpu()), DType::Float64).to_vector<double>();
  }
  return r;
}

Tensor crcl_loss(const CrclProbabilities& probs, const std::vector<double>& y, Scalars* parts) {
  const Tensor& p1 = probs.i2t;
  const int64_t B = p1.size(0);
  REMATCH_CHECK(static_cast<int64_t>(y.size()) == B, "crcl: ", y.size(), " labels for a batch of ", B);
  const Tensor labels = to(to(from_vector(y, {B}), p1.dtype()), p1.device());
  const Tensor one_minus_y = rsub(1.0, labels);
  const Tensor off_diagonal = rsub(1.0, eye(B, B, p1.dtype(), p1.device()));
  // loss_positive = −log p1_ii − log p2_ii; loss1 = (y · loss_positive).mean()
  const Tensor positive = neg(add(log(diagonal(p1)), log(diagonal(probs.t2i))));
  const Tensor loss1 = mean(mul(labels, positive));
  // loss_neg (both directions); loss2 = loss_neg.mean() · 5
  const Tensor negative = add(negative_term(p1, one_minus_y, off_diagonal),
                              negative_term(probs.t2i, one_minus_y, off_diagonal));
  const Tensor loss2 = mul(mean(negative), kCrclNegativeWeight);
  if (parts) {
    (*parts)["positive"] = loss1.item<double>();
    (*parts)["negative"] = loss2.item<double>();
  }
  return add(loss1, loss2);
}

std::vector<double> crcl_targets(const std::vector<double>& y_last, const std::vector<double>& p, bool warmup,
                                 const CrclLabelRule& rule) {
  REMATCH_CHECK(y_last.size() == p.size(), "crcl: ", y_last.size(), " stored labels for ", p.size(), " pairs");
  if (!rule.mc) return p;
  std::vector<double> y(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    y[i] = warmup ? y_last[i] : rule.alpha * y_last[i] + (1 - rule.alpha) * p[i];
    if (rule.confident && y[i] < kCrclConfidentFloor) y[i] = 0;
  }
  return y;
}

}  // namespace rematch::train
