// The losses and label refinement of CREAM (Cross-modal Retrieval with Noisy Correspondence via Consistency Refining
// and Mining, TIP'24) as its official code computes them (XLearning-SCU/2024-TIP-CREAM, `InfoNCELoss.py:
// InfoNCELoss.forward`, `model.py: SGRAF.predict`; docs/methods/cream.md §2). S [B, B] is a batch's score matrix
// (rows images, columns captions, the diagonal the given pairs), E = exp(S/τ), and
//   P^t_ij = E_ij / Σ_k E_ik (row: image i retrieves caption j),   P^i_ij = E_ij / Σ_k E_kj (column).
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace rematch::train {

// The per-pair InfoNCE loss ℓ_i = −log P^t_ii − log P^i_ii, shape [B] (mode "warmup" averages it, mode "eval_loss"
// returns it per pair). Differentiable.
Tensor cream_infonce_per_pair(const Tensor& scores, double tau);

// `SGRAF.predict` (mode "predict"): p_i = clamp((P^t_ii + P^i_ii)/2, 0, 1), no graph, in double.
std::vector<double> cream_predict(const Tensor& scores, double tau);

// The refined-label loss (mode "train", soft_label=True, smooth_label=False) with labels y [B] (constants) and a
// filter f:
//   W^r_ij = (1 − y_i) S_ij / (Σ_{k≠i} S_ik + 1e-6),  W^c_ij = (1 − y_j) S_ij / (Σ_{k≠j} S_kj + 1e-6)  (i ≠ j; 0 on
//   the diagonal), each entry below f set to 0, then y_i added on the diagonal of both;
//   L = (1/B) Σ_ij [W^r_ij (−log P^t_ij) + W^c_ij (−log P^i_ij)].
// The weights are not detached: the gradient reaches S through them too, as the code's `similarity = scores.clone()`.
Tensor cream_refined_loss(const Tensor& scores, const std::vector<double>& labels, double tau, double filter);

}  // namespace rematch::train
