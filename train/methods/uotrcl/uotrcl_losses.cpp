#include "train/methods/uotrcl/uotrcl_losses.h"

#include "autograd/autograd.h"
#include "nn/functional.h"

namespace rematch::train::uotrcl {
namespace {

std::string describe(const Tensor& t) { return t.defined() ? t.describe() : std::string("undefined"); }

void check_logits_and_targets(const char* op, const Tensor& logits_v, const Tensor& logits_t, const Tensor& tv,
                              const Tensor& tt) {
  REMATCH_CHECK(logits_v.defined() && logits_v.dim() == 2 && logits_t.defined() &&
                    logits_t.sizes() == logits_v.sizes(),
                op, ": logits must be two [B, K] tensors of one shape, got ", describe(logits_v), " and ",
                describe(logits_t));
  REMATCH_CHECK(tv.defined() && tt.defined() && tv.sizes() == logits_v.sizes() && tt.sizes() == logits_v.sizes(),
                op, ": targets ", describe(tv), " and ", describe(tt), " must have the logits' shape ",
                logits_v.shape_str());
}

}  // namespace

Tensor one_hot_labels(const std::vector<int64_t>& labels, int64_t num_classes, DType dtype, Device device) {
  REMATCH_CHECK(num_classes > 0, "one_hot_labels: num_classes must be positive, got ", num_classes);
  const int64_t n = static_cast<int64_t>(labels.size());
  std::vector<double> rows(static_cast<size_t>(n * num_classes), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t y = labels[static_cast<size_t>(i)];
    REMATCH_CHECK(y >= 0 && y <= num_classes, "one_hot_labels: label ", y, " of sample ", i, " is outside 0..",
                  num_classes, " (K = ", num_classes, " is MRL's out-of-range draw)");
    if (y < num_classes) rows[static_cast<size_t>(i * num_classes + y)] = 1.0;
  }
  return kernels::to_device(kernels::cast(from_vector(rows, {n, num_classes}), dtype), device);
}

Tensor warmup_ce_loss(const Tensor& logits_v, const Tensor& logits_t, const Tensor& targets_v,
                      const Tensor& targets_t) {
  check_logits_and_targets("warmup_ce_loss", logits_v, logits_t, targets_v, targets_t);
  // UOT-RCL Eq. (2); cross_entropy_soft is −Σ_k t_k log_softmax_k, averaged over the batch.
  return add(nn::cross_entropy_soft(logits_v, targets_v), nn::cross_entropy_soft(logits_t, targets_t));
}

Tensor plc_loss(const Tensor& logits_v, const Tensor& logits_t, const Tensor& corrected) {
  check_logits_and_targets("plc_loss", logits_v, logits_t, corrected, corrected);
  // UOT-RCL Eq. (15): one soft target for both modalities.
  return add(nn::cross_entropy_soft(logits_v, corrected), nn::cross_entropy_soft(logits_t, corrected));
}

Tensor xlogx(const Tensor& x) {
  // log of a clamped x: at x = 0 the value is 0·log(1e-30) = 0 and the gradient finite (log 1e-30).
  return mul(x, log(clamp_min(x, 1e-30)));
}

Tensor jsd(const Tensor& p, const Tensor& q) {
  REMATCH_CHECK(p.defined() && q.defined() && p.dim() >= 1 && q.dim() >= 1 && p.size(-1) == q.size(-1), "jsd: ",
                describe(p), " and ", describe(q), " must be distributions along one last dim of the same size");
  const Tensor m = mul(add(p, q), 0.5);
  // ½Σ p log p + ½Σ q log q − Σ m log m, the two entropies broadcast to the shape of m.
  const Tensor own = mul(add(sum(xlogx(p), {-1}, true), sum(xlogx(q), {-1}, true)), 0.5);
  return squeeze(sub(own, sum(xlogx(m), {-1}, true)), -1);
}

Tensor relation_vectors(const Tensor& z, const Tensor& z_confident, double tau2) {
  REMATCH_CHECK(tau2 > 0, "relation_vectors: tau2 must be positive, got ", tau2);
  REMATCH_CHECK(z_confident.defined() && z_confident.dim() == 2 && z_confident.size(0) > 0,
                "relation_vectors: the confident set is empty or not [G, L]: ", describe(z_confident));
  // softmax(−(1 − cos)/τ₂) = softmax(cos/τ₂): the constant 1/τ₂ cancels.
  return softmax(div(nn::cosine_similarity_matrix(z, z_confident), tau2), 1);
}

Tensor relation_cost(const Tensor& R_v, const Tensor& R_t) {
  REMATCH_CHECK(R_v.defined() && R_t.defined() && R_v.dim() == 2 && R_t.dim() == 2 && R_v.size(1) == R_t.size(1),
                "relation_cost: expected R_v [B, G] and R_t [B', G], got ", describe(R_v), " and ", describe(R_t));
  return jsd(unsqueeze(R_v, 1), unsqueeze(R_t, 0));
}

ot::SinkhornResult relation_plan(const Tensor& cost, const RelationOtOptions& options) {
  REMATCH_CHECK(cost.defined() && cost.dim() == 2 && cost.size(0) == cost.size(1),
                "relation_plan: the relation cost must be square [B, B], got ", describe(cost));
  const bool wide = options.float64 && cost.device().is_cpu();
  Tensor c = wide ? kernels::cast(cost.detach(), DType::Float64) : cost.detach();
  if (options.normalize_cost) {
    const double mean_cost = kernels::reduce(kernels::ReduceOp::Mean, c, {}, false).item<double>();
    // All-zero costs (identical relation vectors, or B = 1) leave nothing to normalise: the plan is uniform.
    if (mean_cost > 0) c = kernels::scalar_op(kernels::ScalarOp::Mul, c, 1.0 / mean_cost);
  }
  ot::SinkhornOptions o;
  o.epsilon = options.epsilon;
  o.max_iter = options.max_iter;
  o.tol = options.tol;
  ot::SinkhornResult r = ot::sinkhorn(c, Tensor(), Tensor(), o);
  r.plan = kernels::cast(r.plan, cost.dtype());
  return r;
}

Tensor bhg_loss(const Tensor& z_v, const Tensor& z_t, const Tensor& plan, double tau3) {
  REMATCH_CHECK(tau3 > 0, "bhg_loss: tau3 must be positive, got ", tau3);
  REMATCH_CHECK(z_v.defined() && z_t.defined() && z_v.dim() == 2 && z_v.sizes() == z_t.sizes(),
                "bhg_loss: embeddings must be two [B, L] tensors of one shape, got ", describe(z_v), " and ",
                describe(z_t));
  const int64_t B = z_v.size(0);
  REMATCH_CHECK(plan.defined() && plan.dim() == 2 && plan.size(0) == B && plan.size(1) == B, "bhg_loss: plan ",
                describe(plan), " must be [", B, ", ", B, "]");
  const Tensor scores = div(matmul(z_v, transpose(z_t, 0, 1)), tau3);  // z_iᵛ·z_jᵗ / τ₃
  const Tensor m_v2t = div(plan, sum(plan, {1}, true));                 // rows of M, normalised
  const Tensor plan_t = transpose(plan, 0, 1);
  const Tensor m_t2v = div(plan_t, sum(plan_t, {1}, true));             // columns of M, normalised
  return add(nn::cross_entropy_soft(scores, m_v2t), nn::cross_entropy_soft(transpose(scores, 0, 1), m_t2v));
}

}  // namespace rematch::train::uotrcl
