#include "nn/functional.h"

namespace rematch::nn {

namespace {

Tensor reduce_loss(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return loss;
    case Reduction::Mean: return mean(loss);
    case Reduction::Sum: return sum(loss);
    case Reduction::BatchMean: return div(sum(loss), static_cast<double>(loss.dim() == 0 ? 1 : loss.size(0)));
  }
  REMATCH_FAIL("loss reduction: unknown value ", static_cast<int>(reduction));
}

void check_logits(const char* op, const Tensor& logits) {
  REMATCH_CHECK(logits.defined() && logits.dim() == 2 && is_floating(logits.dtype()), op,
                ": logits must be a floating [N, K] tensor, got ", logits.defined() ? logits.describe() : "undefined");
}

// target·(log target − input), 0 where target = 0, as one node (a differentiable where() over t·log t would
// send 0·(−inf) = NaN back through the masked branch). The backward takes the log of target only where it is
// positive (1 elsewhere, masked out), so that differentiating it again gives no 0/0 either.
Tensor kl_pointwise(const Tensor& input, const Tensor& target) {
  Tensor y, positive;
  {
    NoGradGuard no_grad;
    positive = gt(target, 0.0);
    const Tensor zero = zeros_like(target);
    y = where(positive, mul(target, sub(log(target), input)), zero);
  }
  return record("kl_div", {input, target}, y, [input, target, positive](const TensorList& g) {
    const Tensor safe = where(positive, target, ones({}, target.dtype(), target.device()));
    const Tensor dlog = where(positive, add(log(safe), 1.0), zeros_like(target));
    return TensorList{neg(mul(g[0], target)), mul(g[0], sub(dlog, input))};
  });
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction) {
  check_logits("cross_entropy", logits);
  REMATCH_CHECK(target.defined() && is_index_dtype(target.dtype()) && target.sizes() == Shape{logits.size(0)},
                "cross_entropy: target must be int32/int64 of shape [", logits.size(0), "] for logits ",
                logits.describe(), ", got ", target.defined() ? target.describe() : "undefined");
  Tensor picked;
  try {
    picked = gather(log_softmax(logits, 1), 1, unsqueeze(target, 1));
  } catch (const Error& e) {
    REMATCH_FAIL("cross_entropy: target is not a class id in [0, ", logits.size(1), "): ", e.what());
  }
  return reduce_loss(neg(squeeze(picked, 1)), reduction);
}

Tensor cross_entropy_soft(const Tensor& logits, const Tensor& probs, Reduction reduction) {
  check_logits("cross_entropy_soft", logits);
  REMATCH_CHECK(probs.defined() && probs.sizes() == logits.sizes(), "cross_entropy_soft: probs ",
                probs.defined() ? probs.describe() : "undefined", " must have the shape of logits ", logits.describe());
  return reduce_loss(neg(sum(mul(probs, log_softmax(logits, 1)), {1})), reduction);
}

Tensor kl_div(const Tensor& input_log_probs, const Tensor& target_probs, Reduction reduction) {
  REMATCH_CHECK(input_log_probs.defined() && target_probs.defined() &&
                    input_log_probs.sizes() == target_probs.sizes(),
                "kl_div: input ", input_log_probs.defined() ? input_log_probs.describe() : "undefined",
                " and target ", target_probs.defined() ? target_probs.describe() : "undefined",
                " must have the same shape");
  return reduce_loss(kl_pointwise(input_log_probs, target_probs), reduction);
}

Tensor cosine_similarity_matrix(const Tensor& a, const Tensor& b, double eps) {
  REMATCH_CHECK(a.defined() && b.defined() && a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(1),
                "cosine_similarity_matrix: expected a [N, D] and b [M, D], got ",
                a.defined() ? a.describe() : "undefined", " and ", b.defined() ? b.describe() : "undefined");
  return matmul(l2_normalize(a, 1, eps), transpose(l2_normalize(b, 1, eps), 0, 1));
}

Tensor hinge(const Tensor& x, double margin) { return clamp_min(add(x, margin), 0.0); }

Tensor hardest_negative_triplet(const Tensor& scores, double margin, bool max_violation) {
  REMATCH_CHECK(scores.defined() && scores.dim() == 2 && scores.size(0) == scores.size(1),
                "hardest_negative_triplet: scores must be a square [N, N] matrix (positives on the diagonal), got ",
                scores.defined() ? scores.describe() : "undefined");
  const int64_t n = scores.size(0);
  const Tensor diag_index = reshape(arange(n, DType::Int64, scores.device()), {n, 1});
  const Tensor d = gather(scores, 1, diag_index);  // [N, 1]: d_i broadcast along row i
  const Tensor positives = eye(n, n, DType::Bool, scores.device());
  // cost_s[i][j]: image i as query, caption j a negative; cost_im[i][j]: caption j as query, image i a negative.
  Tensor cost_s = masked_fill(hinge(sub(scores, d), margin), positives, 0.0);
  Tensor cost_im = masked_fill(hinge(sub(scores, transpose(d, 0, 1)), margin), positives, 0.0);
  if (max_violation) {
    cost_s = max(cost_s, 1).first;
    cost_im = max(cost_im, 0).first;
  }
  return add(sum(cost_s), sum(cost_im));
}

}  // namespace rematch::nn
