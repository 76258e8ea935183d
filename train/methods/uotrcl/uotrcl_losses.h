// The loss terms and relation-OT pieces of UOT-RCL (docs/methods/uotrcl.md §4.3; the paper has no public code). Every
// function is written from the differentiable op API, so it runs on the inputs' device and backpropagates to
// every floating input; the training step backpropagates through the class logits (Eqs. 2, 15) and the batch
// embeddings (Eq. 18) only — the relation vectors, their JSD cost and the plan M are fixed targets there
// (ot/ returns detached plans).
#pragma once

#include <cstdint>
#include <vector>

#include "ot/ot.h"
#include "tensor/tensor.h"

namespace rematch::train::uotrcl {

// One-hot rows [N, K] of `dtype` on `device` for labels in 0..K. The label K — MRL's inclusive
// randint(0, K) draw (`--noise_mode mrl`, docs/methods/uotrcl.md §4.1) — has no class and gives an all-zero row: that
// sample carries no supervision. A label outside 0..K is an Error naming it.
Tensor one_hot_labels(const std::vector<int64_t>& labels, int64_t num_classes, DType dtype = DType::Float32,
                      Device device = Device::cpu());

// UOT-RCL Eq. (2), the warm-up loss: −(1/B) Σ_i [t_iᵛᵀ log p_iᵛ + t_iᵗᵀ log p_iᵗ] with p = softmax(logits)
// and targets t [B, K] (the noisy one-hot labels of each modality; rows may sum to less than 1).
Tensor warmup_ce_loss(const Tensor& logits_v, const Tensor& logits_t, const Tensor& targets_v,
                      const Tensor& targets_t);

// UOT-RCL Eq. (15): L_PLC = −(1/B) Σ_i Ŷ_iᵀ (log p_iᵛ + log p_iᵗ) for the batch rows of the corrected labels
// Ŷ = N·T[:N, :K] [B, K] (each row sums to at most 1). The paper's −(1/N) Σ N Ŷ_i is this over the batch.
Tensor plc_loss(const Tensor& logits_v, const Tensor& logits_t, const Tensor& corrected);

// x·log x with 0·log 0 = 0 (the JSD of distributions with zero entries).
Tensor xlogx(const Tensor& x);

// Jensen–Shannon divergence along the last dim (natural log), UOT-RCL Eq. (4):
// ½ KL(p‖m) + ½ KL(q‖m), m = (p + q)/2, computed as ½Σ p log p + ½Σ q log q − Σ m log m. p and q broadcast
// against each other; the result has their broadcast shape without the last dim.
Tensor jsd(const Tensor& p, const Tensor& q);

// UOT-RCL Eq. (16) with dist = 1 − cos (docs/methods/uotrcl.md §4.3.3 ⚠: the paper's d is a cosine *similarity*, so
// exp(−d/τ₂) would favour dissimilar confident samples): R_i = softmax_g(cos(z_i, z_g)/τ₂) over the confident
// set, z [B, L] and z_confident [G, L] -> [B, G].
Tensor relation_vectors(const Tensor& z, const Tensor& z_confident, double tau2);

// C^R_ij = JSD(R_iᵛ, R_jᵗ) (UOT-RCL Eq. (17)): R_v [B, G], R_t [B', G] -> [B, B'].
Tensor relation_cost(const Tensor& R_v, const Tensor& R_t);

// The relation OT of UOT-RCL Eq. (17): uniform marginals 1/B, entropic, log domain (docs/ot.md §1.3:
// float64 on the CPU, the cost's float32 on CUDA).
// `normalize_cost` divides C^R by its mean first, so ε is in units of the typical cost (the JSD of nearly
// flat relation vectors is ~1e-3 at τ₂ = 1, docs/methods/uotrcl.md §4.3) — docs/uotrcl-choices.md has the study.
struct RelationOtOptions {
  double epsilon = 0.02;
  int64_t max_iter = 100;
  double tol = 1e-6;           // L1 row-marginal error (ot::StopRule::MarginalL1)
  bool normalize_cost = true;  // C^R / mean(C^R)
  bool float64 = true;         // solve in float64 on the CPU reference path; the plan keeps the cost's dtype
};
ot::SinkhornResult relation_plan(const Tensor& cost, const RelationOtOptions& options);

// UOT-RCL Eq. (18): with p^{v2t}_i = softmax_j(z_iᵛ·z_jᵗ/τ₃), p^{t2v}_i = softmax_j(z_iᵗ·z_jᵛ/τ₃),
// M^{v2t} = M row-normalised and M^{t2v} = Mᵀ row-normalised (M column-normalised, transposed),
//   L_BHG = −(1/B) Σ_i [M_i^{v2t}·log p_i^{v2t} + M_i^{t2v}·log p_i^{t2v}].
// z_v, z_t [B, L] (unit rows from the encoders), plan M [B, B] with positive row and column sums.
Tensor bhg_loss(const Tensor& z_v, const Tensor& z_t, const Tensor& plan, double tau3);

}  // namespace rematch::train::uotrcl
