// CRCL's loss and its self-refined correspondence labels (docs/methods/crcl.md §9.1–§9.2), as the official
// `CRCL_NeurIPS23/model/CRCL.py: CRCL.train_self` computes them on a batch's scores S [B, B] (rows images,
// columns captions, the diagonal the given pairs):
//   p1 = exp(S/τ) / (Σ_j exp(S_ij/τ) + ε)            (rows: image → text), ε = 1e-10
//   p2 = exp(Sᵀ/τ) / (Σ_j exp(Sᵀ_ij/τ) + ε)          (rows: text → image)
//   p_i = (p1_ii + p2_ii) / 2, detached: the batch's estimate of pair i's correspondence
//   y_i = the label of the step (crcl_targets)
//   L = (1/B) Σ_i y_i·(−log p1_ii − log p2_ii)
//     + 5·(1/B) Σ_i [ Σ_{j≠i} tan(p1_ij) / (Σ_j tan(p1_ij))^(1−y_i) + the same of p2 ]
#pragma once

#include <vector>

#include "tensor/tensor.h"
#include "train/methods/method.h"

namespace rematch::train {

// The weight of the complementary (negative) term: `loss2 = loss_neg.mean() * 5` in CRCL.train_self.
constexpr double kCrclNegativeWeight = 5.0;
// Labels below this are set to 0 when --confident is on (`y[y < 0.1] = 0`).
constexpr double kCrclConfidentFloor = 0.1;

struct CrclProbabilities {
  Tensor i2t, t2i;         // p1, p2 [B, B], with the graph of S
  std::vector<double> p;   // p_i on the host, no graph
};
CrclProbabilities crcl_probabilities(const Tensor& scores, double tau);

// The loss above from the probabilities and the step's labels y (size B); `parts` gets "positive" (the first
// term) and "negative" (the second, weight included).
Tensor crcl_loss(const CrclProbabilities& probs, const std::vector<double>& y, Scalars* parts = nullptr);

struct CrclLabelRule {
  bool mc = true;         // moving-average labels (--mc); off: y = p
  bool confident = true;  // y < 0.1 → 0 (--confident), with mc only
  double alpha = 0.8;
};

// The step's labels from the stored labels y_last of the batch's pairs and the batch's p: with mc, y_last itself
// in a warm-up epoch (frozen) and α·y_last + (1 − α)·p after it, then the confident floor; without mc, p.
std::vector<double> crcl_targets(const std::vector<double>& y_last, const std::vector<double>& p, bool warmup,
                                 const CrclLabelRule& rule);

// tan(x) for x ∈ [0, 1] from differentiable ops (there is no tan kernel): Lambert's continued fraction
// tan x = x / (1 − x²/(3 − x²/(5 − …))) at depth 10, relative error below 3e-16 on [0, 1] (the same expansion as
// train/losses/retrieval_losses.cpp's RCL φ = tan); its gradient is the fraction's own, sec² x to the same accuracy.
Tensor crcl_tan(const Tensor& x);

}  // namespace rematch::train
