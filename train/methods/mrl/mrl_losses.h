// The two losses of MRL (docs/methods/mrl.md §3; Hu et al., "Learning Cross-Modal Retrieval with Noisy Labels",
// CVPR 2021; official code penghu-cs/MRL). Written from the differentiable op API: they run on the inputs'
// device and backpropagate to every floating input.
#pragma once

#include "tensor/tensor.h"

namespace rematch::train::mrl {

// The robust clustering loss, MRL `src/utils.py: MeanClusteringError.forward` (paper Eq. 3, in the code's form):
//   pred = softmax(logits / τ),  p_i = Σ_k (1 − q_ik) pred_ik / Σ_k pred_ik,  L_r = (1/B) Σ_i log p_i
// for one view's prototype logits [B, K] (z·C) and its one-hot labels q [B, K]. Minimising it drives the
// probability off the given class towards 0; a zero label row (MRL's out-of-range draw, `--noise_mode mrl`)
// gives p_i = 1 and no gradient.
Tensor mean_clustering_error(const Tensor& logits, const Tensor& one_hot, double tau);

// The multimodal contrastive loss, MRL `main_noisy.py: main.cross_modal_contrastive_ctriterion` for two views
// (paper Eqs. 5–7 in the code's form): with Z = [z_v; z_t] [2B, L] and S = exp(Z Zᵀ / τ) with its diagonal zeroed,
// partner(r) the other view of pair r,
//   L_c = −(1/2B) Σ_r log(S[r, partner(r)] / Σ_s S[r, s]) − (1/2B) Σ_r log(S[partner(r), r] / Σ_s S[r, s]).
// The two halves are the official loss1 and loss2; S is symmetric, so they agree (to rounding).
Tensor multimodal_contrastive_loss(const Tensor& z_v, const Tensor& z_t, double tau);

}  // namespace rematch::train::mrl
