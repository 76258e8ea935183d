#include "train/losses/retrieval_losses.h"

#include <cmath>
#include <utility>

#include "nn/functional.h"

namespace rematch::losses {

namespace {

constexpr double kSoftmaxEps = 1e-10;  // CCL / rematch softmax denominators, Π floor (§1.6, §2.1)
constexpr double kPhiEps = 1e-10;      // CCL φ: 1 − p + ε
constexpr double kRceEps = 1e-7;       // RCE label (§1.2)
constexpr int kTanDepth = 10;          // continued-fraction depth of tan_unit_interval

std::string describe(const Tensor& t) { return t.defined() ? t.describe() : "undefined"; }

void check_scores(const char* op, const Tensor& scores) {
  REMATCH_CHECK(scores.defined() && scores.dim() == 2 && scores.size(0) == scores.size(1) && scores.size(0) > 0 &&
                    is_floating(scores.dtype()),
                op, ": scores must be a floating square [B, B] matrix (rows images, columns captions), got ",
                describe(scores));
}

void check_tau(const char* op, double tau) {
  REMATCH_CHECK(std::isfinite(tau) && tau > 0, op, ": temperature tau must be positive and finite, got ", tau);
}

// [B, 1]: x[i][i].
Tensor diagonal(const Tensor& x) {
  const int64_t n = x.size(0);
  return gather(x, 1, reshape(arange(n, DType::Int64, x.device()), {n, 1}));
}

// log(exp(x_ij) / (Σ_k exp(x_ik) + ε)) per row: the ε becomes one more log-sum-exp term, log ε.
Tensor log_softmax_eps(const Tensor& logits) {
  const Tensor eps_column = full({logits.size(0), 1}, std::log(kSoftmaxEps), logits.dtype(), logits.device());
  return sub(logits, logsumexp(cat({logits, eps_column}, 1), {1}, true));
}

// −(1/B) Σ_i log P_ii.
Tensor mean_negative_log_diagonal(const Tensor& log_probs) { return neg(mean(diagonal(log_probs))); }

// tan(p) for probabilities p ∈ [0, 1]: there is no tan kernel, so Lambert's continued fraction
// tan x = x / (1 − x²/(3 − x²/(5 − …))) truncated at depth 10 (relative error below 3e-16 on [0, 1]); the
// derivative is recorded as sec² x = 1 + tan² x.
Tensor tan_unit_interval(const Tensor& p) {
  Tensor y;
  {
    NoGradGuard no_grad;
    const Tensor p2 = square(p);
    Tensor t = full_like(p, 2.0 * kTanDepth + 1);
    for (int k = kTanDepth; k >= 1; --k) t = rsub(2.0 * k - 1, div(p2, t));
    y = div(p, t);
  }
  return record("tan", {p}, y, [y = y.detach()](const TensorList& g) {
    return TensorList{mul(g[0], add(square(saved_output(y)), 1.0))};
  });
}

Tensor complementary_phi(const Tensor& p, ComplementaryPhi phi, double q) {
  switch (phi) {
    case ComplementaryPhi::Log: return neg(log(add(rsub(1.0, p), kPhiEps)));
    case ComplementaryPhi::Tan: return tan_unit_interval(p);
    case ComplementaryPhi::Abs: return p;
    case ComplementaryPhi::Exp: return exp(sub(p, 1.0));
    case ComplementaryPhi::Gce: return div(rsub(1.0, pow(add(rsub(1.0, p), kPhiEps), q)), q);
  }
  REMATCH_FAIL("complementary_contrastive_loss: unknown phi ", static_cast<int>(phi));
}

// KL(A‖B) with "batchmean", from log B and A (nn.KLDivLoss(input = log B, target = A)).
Tensor kl(const Tensor& log_b, const Tensor& a) { return nn::kl_div(log_b, a, nn::Reduction::BatchMean); }

template <typename Enum, size_t N>
Enum parse_choice(const char* what, const std::string& name, const std::pair<const char*, Enum> (&choices)[N]) {
  std::string list;
  for (const auto& [spelling, value] : choices) {
    if (name == spelling) return value;
    list += list.empty() ? spelling : std::string("|") + spelling;
  }
  REMATCH_FAIL(what, ": unknown value \"", name, "\", expected one of ", list);
}

}  // namespace

Tensor infonce_loss(const Tensor& scores, double tau) {
  check_scores("infonce_loss", scores);
  check_tau("infonce_loss", tau);
  const Tensor logits = div(scores, tau);
  return add(mean_negative_log_diagonal(log_softmax_eps(logits)),
             mean_negative_log_diagonal(log_softmax_eps(transpose(logits, 0, 1))));
}

Tensor l2rm_warmup_loss(const Tensor& scores, double tau, RceLabel label) {
  check_scores("l2rm_warmup_loss", scores);
  check_tau("l2rm_warmup_loss", tau);
  const int64_t b = scores.size(0);
  const Tensor logits = div(scores, tau);
  // Column softmax of S = row softmax of Sᵀ, kept in S's orientation: its diagonal and Σ P·log Y (Y is
  // symmetric) are those of P^{t2i}.
  const Tensor log_i2t = log_softmax(logits, 1), log_t2i = log_softmax(logits, 0);
  const double log_off = std::log(kRceEps);
  const double log_diag = label == RceLabel::Code ? std::log1p(kRceEps) : std::log1p(-kRceEps);
  const Tensor log_label =
      add(mul(eye(b, b, scores.dtype(), scores.device()), log_diag - log_off), log_off);
  auto rce = [&](const Tensor& log_p) { return div(neg(sum(mul(exp(log_p), log_label))), static_cast<double>(b)); };
  const Tensor total = add(add(mean_negative_log_diagonal(log_i2t), mean_negative_log_diagonal(log_t2i)),
                           add(rce(log_i2t), rce(log_t2i)));
  return mul(total, 0.5);
}

Tensor complementary_contrastive_loss(const Tensor& scores, double tau, ComplementaryPhi phi, double q,
                                      const Tensor& negative_mask) {
  check_scores("complementary_contrastive_loss", scores);
  check_tau("complementary_contrastive_loss", tau);
  REMATCH_CHECK(phi != ComplementaryPhi::Gce || (std::isfinite(q) && q > 0),
                "complementary_contrastive_loss: gce exponent q must be positive, got ", q);
  REMATCH_CHECK(negative_mask.defined() && negative_mask.sizes() == scores.sizes() &&
                    (negative_mask.dtype() == DType::Bool || is_floating(negative_mask.dtype())),
                "complementary_contrastive_loss: negative_mask must be bool or floating with the shape of scores ",
                scores.describe(), ", got ", describe(negative_mask));
  check_same_device("complementary_contrastive_loss", {&scores, &negative_mask});
  const int64_t b = scores.size(0);
  const Tensor mask = to(negative_mask.detach(), scores.dtype());
  const Tensor logits = div(scores, tau);
  auto risk = [&](const Tensor& log_p) {
    return div(sum(mul(mask, complementary_phi(exp(log_p), phi, q))), static_cast<double>(b));
  };
  return add(risk(log_softmax_eps(logits)), risk(log_softmax_eps(transpose(logits, 0, 1))));
}

int64_t negatives_per_row(int64_t batch, double ratio) {
  REMATCH_CHECK(batch >= 2, "negatives_per_row: a batch of ", batch, " has no negatives (need B >= 2)");
  REMATCH_CHECK(!std::isnan(ratio), "negatives_per_row: ratio is NaN");
  if (ratio <= 0 || ratio >= 1) return batch - 1;
  const int64_t n = static_cast<int64_t>(std::floor(ratio * static_cast<double>(batch)));
  REMATCH_CHECK(n >= 1, "negatives_per_row: ratio ", ratio, " of a batch of ", batch,
                " keeps no negative (floor(ratio·B) = 0)");
  return n;
}

Tensor random_negative_mask(int64_t batch, double ratio, Generator& gen, Device device) {
  const int64_t n = negatives_per_row(batch, ratio);
  NoGradGuard no_grad;
  const Tensor positives = eye(batch, batch, DType::Bool);
  if (n == batch - 1) return to(logical_not(positives), device);
  // RCL: randn[eye > 0] = row minimum − 1; uniform noise is ≥ 0, so −1 is below every row minimum.
  const Tensor noise = masked_fill(rand({batch, batch}, DType::Float64, Device::cpu(), &gen), positives, -1.0);
  const Tensor picked = topk(noise, n, 1).second;
  const Tensor counts = scatter_add(zeros({batch, batch}), 1, picked, ones({batch, n}));
  return to(gt(counts, 0.0), device);
}

Tensor per_sample_split_loss(const Tensor& scores, double margin, SplitLoss mode) {
  check_scores("per_sample_split_loss", scores);
  REMATCH_CHECK(std::isfinite(margin), "per_sample_split_loss: margin must be finite, got ", margin);
  const int64_t b = scores.size(0);
  const Tensor d = diagonal(scores);  // [B, 1]
  const Tensor positives = eye(b, b, DType::Bool, scores.device());
  // cost_s[i][j] = [α − S_ii + S_ij]_+ (row i: image i against captions j);
  // cost_im[i][j] = [α − S_jj + S_ij]_+ (column j: caption j against images i).
  const Tensor cost_s = masked_fill(nn::hinge(sub(scores, d), margin), positives, 0.0);
  const Tensor cost_im = masked_fill(nn::hinge(sub(scores, transpose(d, 0, 1)), margin), positives, 0.0);
  if (mode == SplitLoss::Mean) return add(mean(cost_s, {1}), mean(cost_im, {0}));
  return add(max(cost_s, 1).first, max(cost_im, 0).first);
}

Tensor rematch_kl_loss(const Tensor& scores, const Tensor& plan, double tau, RematchLoss variant) {
  check_scores("rematch_kl_loss", scores);
  check_tau("rematch_kl_loss", tau);
  REMATCH_CHECK(plan.defined() && plan.sizes() == scores.sizes() && is_floating(plan.dtype()),
                "rematch_kl_loss: plan must be a floating matrix with the shape of scores ", scores.describe(),
                ", got ", describe(plan));
  Tensor pi = plan.detach();
  REMATCH_CHECK(!has_non_finite(pi), "rematch_kl_loss: plan ", pi.describe(), " has a NaN or infinite entry");
  const double smallest = amin(pi).item<double>();
  REMATCH_CHECK(smallest >= 0, "rematch_kl_loss: plan has a negative entry (", smallest, "); a transport plan is >= 0");
  pi = clamp_min(to(to(pi, scores.dtype()), scores.device()), kSoftmaxEps);
  const Tensor pi_t = transpose(pi, 0, 1);
  const Tensor target_i2t = div(pi, sum(pi, {1}, true)), target_t2i = div(pi_t, sum(pi_t, {1}, true));
  const Tensor log_target_i2t = log(target_i2t), log_target_t2i = log(target_t2i);

  const Tensor logits = div(scores, tau);
  const Tensor log_i2t = log_softmax_eps(logits), log_t2i = log_softmax_eps(transpose(logits, 0, 1));
  const Tensor p_i2t = exp(log_i2t), p_t2i = exp(log_t2i);
  const int64_t b = scores.size(0);
  switch (variant) {
    case RematchLoss::SymKl:
      return mul(add(add(kl(log_i2t, target_i2t), kl(log_t2i, target_t2i)),
                     add(kl(log_target_i2t, p_i2t), kl(log_target_t2i, p_t2i))),
                 0.5);
    case RematchLoss::Kl: return add(kl(log_i2t, target_i2t), kl(log_t2i, target_t2i));
    case RematchLoss::SoftInfoNce:
      return div(neg(add(sum(mul(log_i2t, target_i2t)), sum(mul(log_t2i, target_t2i)))), static_cast<double>(b));
    case RematchLoss::Js: {
      const Tensor mix_i2t = mul(add(p_i2t, target_i2t), 0.5), mix_t2i = mul(add(p_t2i, target_t2i), 0.5);
      const Tensor i2t = mul(add(kl(log_i2t, mix_i2t), kl(log_target_i2t, mix_i2t)), 0.5);
      const Tensor t2i = mul(add(kl(log_t2i, mix_t2i), kl(log_target_t2i, mix_t2i)), 0.5);
      return add(i2t, t2i);
    }
  }
  REMATCH_FAIL("rematch_kl_loss: unknown variant ", static_cast<int>(variant));
}

RceLabel parse_rce_label(const std::string& name) {
  static const std::pair<const char*, RceLabel> choices[] = {{"code", RceLabel::Code}, {"paper", RceLabel::Paper}};
  return parse_choice("rce_label", name, choices);
}

ComplementaryPhi parse_complementary_phi(const std::string& name) {
  static const std::pair<const char*, ComplementaryPhi> choices[] = {{"log", ComplementaryPhi::Log},
                                                                     {"tan", ComplementaryPhi::Tan},
                                                                     {"abs", ComplementaryPhi::Abs},
                                                                     {"exp", ComplementaryPhi::Exp},
                                                                     {"gce", ComplementaryPhi::Gce}};
  return parse_choice("loss", name, choices);
}

SplitLoss parse_split_loss(const std::string& name) {
  static const std::pair<const char*, SplitLoss> choices[] = {{"mean", SplitLoss::Mean},
                                                              {"hardest", SplitLoss::Hardest}};
  return parse_choice("split_loss", name, choices);
}

RematchLoss parse_rematch_loss(const std::string& name) {
  static const std::pair<const char*, RematchLoss> choices[] = {{"sym_kl", RematchLoss::SymKl},
                                                                {"kl", RematchLoss::Kl},
                                                                {"soft_infonce", RematchLoss::SoftInfoNce},
                                                                {"js", RematchLoss::Js}};
  return parse_choice("rematch_loss", name, choices);
}

}  // namespace rematch::losses
