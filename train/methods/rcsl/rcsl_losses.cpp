#include "train/methods/rcsl/rcsl_losses.h"

#include <cmath>

namespace rematch::train::rcsl {
namespace {

void check_square(const char* who, const Tensor& sims) {
  REMATCH_CHECK(sims.defined() && sims.dim() == 2 && sims.size(0) == sims.size(1) && sims.size(0) > 0 &&
                    is_floating(sims.dtype()),
                who, ": expected a square floating similarity matrix [B, B] with B >= 1, got ",
                sims.defined() ? sims.describe() : "undefined");
}

void check_embeddings(const char* who, const Tensor& x) {
  REMATCH_CHECK(x.defined() && x.dim() == 2 && is_floating(x.dtype()), who,
                ": expected floating embeddings [B, E], got ", x.defined() ? x.describe() : "undefined");
}

// Row and column indices [B, 1] and [1, B] on `like`'s device, for building masks by broadcasting.
std::pair<Tensor, Tensor> index_grid(int64_t n, const Tensor& like) {
  const Tensor idx = arange(n, DType::Int64, like.device());
  return {reshape(idx, {n, 1}), reshape(idx, {1, n})};
}

// The diagonal of a square matrix as [B], differentiably.
Tensor diagonal(const Tensor& sims) {
  const int64_t n = sims.size(0);
  return sum(mul(sims, eye(n, n, sims.dtype(), sims.device())), {1});
}

}  // namespace

Tensor paired_triplet_loss(const Tensor& sims, int64_t num_paired, double margin) {
  check_square("paired_triplet_loss", sims);
  const int64_t n = sims.size(0);
  REMATCH_CHECK(num_paired >= 0 && num_paired <= n, "paired_triplet_loss: num_paired ", num_paired, " is outside [0, ",
                n, "] for scores ", sims.describe());
  if (num_paired == 0) return zeros({}, sims.dtype(), sims.device());
  const auto [rows, cols] = index_grid(n, sims);
  const Tensor outside_block =
      logical_not(logical_and(lt(rows, static_cast<double>(num_paired)), lt(cols, static_cast<double>(num_paired))));
  const Tensor on_diagonal = eq(rows, cols);
  // ContrastiveLoss: the diagonal is read before the masking; scores_ = −1 outside the paired block.
  const Tensor d = diagonal(sims);
  const Tensor masked = masked_fill(sims, outside_block, -1.0);
  const Tensor cost_s = masked_fill(clamp_min(sub(add(masked, margin), reshape(d, {n, 1})), 0.0), on_diagonal, 0.0);
  const Tensor cost_im = masked_fill(clamp_min(sub(add(masked, margin), reshape(d, {1, n})), 0.0), on_diagonal, 0.0);
  const Tensor hardest_s = max(cost_s, 1).first;    // per image row: its hardest caption
  const Tensor hardest_im = max(cost_im, 0).first;  // per caption column: its hardest image
  return add(sum(narrow(hardest_s, 0, 0, num_paired)), sum(narrow(hardest_im, 0, 0, num_paired)));
}

Tensor alignment_loss(const Tensor& images, const Tensor& captions, int64_t num_paired) {
  check_embeddings("alignment_loss", images);
  check_embeddings("alignment_loss", captions);
  REMATCH_CHECK(images.sizes() == captions.sizes(), "alignment_loss: images ", images.describe(), " and captions ",
                captions.describe(), " must have the same shape");
  REMATCH_CHECK(num_paired >= 1 && num_paired <= images.size(0), "alignment_loss: num_paired ", num_paired,
                " is outside [1, ", images.size(0), "]");
  const Tensor diff = sub(narrow(images, 0, 0, num_paired), narrow(captions, 0, 0, num_paired));
  return mean(sum(square(diff), {1}));
}

Tensor uniformity_loss(const Tensor& x, double t) {
  check_embeddings("uniformity_loss", x);
  const int64_t n = x.size(0);
  if (n < 2) return zeros({}, x.dtype(), x.device());
  // ‖x_i − x_j‖² = ‖x_i‖² + ‖x_j‖² − 2 x_i·x_j.
  const Tensor sq_norms = sum(square(x), {1});
  const Tensor gram = matmul(x, transpose(x, 0, 1));
  const Tensor sq_dist = sub(add(reshape(sq_norms, {n, 1}), reshape(sq_norms, {1, n})), mul(gram, 2.0));
  const auto [rows, cols] = index_grid(n, x);
  const Tensor logits = masked_fill(mul(sq_dist, -t), eq(rows, cols), -INFINITY);
  // The i<j mean equals the mean over all ordered pairs i≠j, since the distances are symmetric.
  return sub(logsumexp(logits, {0, 1}), std::log(static_cast<double>(n) * static_cast<double>(n - 1)));
}

Tensor regularization_loss(const Tensor& images, const Tensor& captions, int64_t num_paired) {
  return add(alignment_loss(images, captions, num_paired),
             mul(add(uniformity_loss(images), uniformity_loss(captions)), 0.5));
}

Tensor robust_mining_loss(const Tensor& sims, double tau) {
  check_square("robust_mining_loss", sims);
  REMATCH_CHECK(tau > 0 && std::isfinite(tau), "robust_mining_loss: tau must be positive, got ", tau);
  const int64_t n = sims.size(0);
  const Tensor scaled = div(sims, tau);
  const Tensor p_i2t = diagonal(softmax(scaled, 1));  // row softmax: image i over the captions
  const Tensor p_t2i = diagonal(softmax(scaled, 0));  // column softmax: caption i over the images
  // ½ [Σ(1 − p_i2t) + Σ(1 − p_t2i)] = n − ½ (Σ p_i2t + Σ p_t2i).
  return rsub(static_cast<double>(n), mul(add(sum(p_i2t), sum(p_t2i)), 0.5));
}

Tensor rcm_loss(const Tensor& images, const Tensor& captions, const Tensor& mined_images, const Tensor& mined_captions,
                int64_t num_paired, double tau) {
  const RcmTerms terms = rcm_terms(images, captions, mined_images, mined_captions, num_paired, tau);
  return add(terms.v, terms.t);
}

RcmTerms rcm_terms(const Tensor& images, const Tensor& captions, const Tensor& mined_images,
                   const Tensor& mined_captions, int64_t num_paired, double tau) {
  for (const Tensor* t : {&images, &captions, &mined_images, &mined_captions}) check_embeddings("rcm_loss", *t);
  REMATCH_CHECK(captions.sizes() == images.sizes() && mined_images.sizes() == images.sizes() &&
                    mined_captions.sizes() == images.sizes(),
                "rcm_loss: the four embedding sets must share one shape [B, E], got images ", images.describe(),
                ", captions ", captions.describe(), ", mined images ", mined_images.describe(), ", mined captions ",
                mined_captions.describe());
  const int64_t n = images.size(0);
  REMATCH_CHECK(num_paired >= 0 && num_paired <= n, "rcm_loss: num_paired ", num_paired, " is outside [0, ", n, "]");
  auto mix = [&](const Tensor& own, const Tensor& mined) {
    if (num_paired == 0) return mined;
    if (num_paired == n) return own;
    return cat({narrow(own, 0, 0, num_paired), narrow(mined, 0, num_paired, n - num_paired)}, 0);
  };
  const Tensor s_images = matmul(mix(images, mined_images), transpose(captions, 0, 1));
  const Tensor s_captions = matmul(mix(captions, mined_captions), transpose(images, 0, 1));
  // S¹ (rows Ĩ: mined images) is B_v, S² (rows T̃: mined captions) is B_t.
  return RcmTerms{robust_mining_loss(s_captions, tau), robust_mining_loss(s_images, tau)};
}

}  // namespace rematch::train::rcsl
