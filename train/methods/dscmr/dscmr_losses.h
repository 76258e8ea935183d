// The three terms of DSCMR's objective (docs/methods/dscmr.md §3; Zhen et al., CVPR 2019), as the official
// `train_model.py: calc_loss` computes them. Written from the differentiable op API (any device, every floating
// input differentiable).
#pragma once

#include "tensor/tensor.h"

namespace rematch::train::dscmr {

// term1, the discrimination loss in the label space (paper Eq. 1 as coded: a Euclidean, not squared, norm):
//   (1/N) Σ_i ‖ŷ_i^v − y_i^v‖₂ + (1/N) Σ_i ‖ŷ_i^t − y_i^t‖₂
// for the classifier outputs ŷ [N, K] and one-hot labels y [N, K] of each view.
Tensor label_space_loss(const Tensor& pred_v, const Tensor& pred_t, const Tensor& y_v, const Tensor& y_t);

// term2, the discrimination loss in the common space (paper Eqs. 2–4): with
// Θ(x, y) = (x yᵀ) / max(‖x‖ ‖y‖ᵀ, 1e-6) / 2 (the cosine, halved) and S = y yᵀ (1 for a shared label),
//   Σ over (a, b) ∈ {(u, u), (u, v), (v, v)} of mean_ij [log(1 + exp Θ_ij) − S_ij Θ_ij]
// for the common-space features u (images), v (texts) [N, d].
Tensor common_space_loss(const Tensor& u, const Tensor& v, const Tensor& y_v, const Tensor& y_t);

// term3, the modality invariance loss (paper Eq. 5 as coded: a Euclidean, not squared, norm):
//   (1/N) Σ_i ‖u_i − v_i‖₂
Tensor invariance_loss(const Tensor& u, const Tensor& v);

}  // namespace rematch::train::dscmr
