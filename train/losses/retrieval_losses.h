// Losses of L2RM, RCL and their baselines on a square score matrix S [B, B] of one batch: rows are images,
// columns captions, the diagonal holds the given (possibly mismatched) pairs. All are written with the
// differentiable op API, so they run on S's device and backpropagate to S; float32 or float64.
//
// Conventions shared with the official code (docs/methods/l2rm.md §1.2, §1.6, rcl.md §2.1): with temperature τ,
//   P^{i2t} = softmax over each row of S/τ          (image i's distribution over captions),
//   P^{t2i} = softmax over each row of Sᵀ/τ         (caption j's distribution over images; = column softmax
//                                                     of S, stored transposed so row j is caption j).
// RCL's CCL and L2RM's rematch losses put ε = 1e-10 in the softmax denominator, exp(S_ij/τ) / (Σ_k
// exp(S_ik/τ) + ε); here that is computed in log space (the ε enters the log-sum-exp as one more term
// log ε), so it is exact and never overflows. L2RM's warm-up loss has no ε. "Mean over rows" is the
// reference's `.sum(1).mean()`.
//
// The VSE++ hardest-negative triplet of L2RM's clean batch (§1.7) and RCL's `max-margin` baseline is
// nn::hardest_negative_triplet (summed; max_violation = false sums over all negatives); L2RM's unused
// `warmup` triplet mode (mean over negatives, summed) is the sum of per_sample_split_loss(S, α, Mean).
#pragma once

#include <string>

#include "autograd/autograd.h"
#include "tensor/random.h"

namespace rematch::losses {

// RCL `CCL(method='infoNCE')` (docs/methods/rcl.md §2.1 baseline): −(1/B) Σ_i log P^{i2t}_ii − (1/B) Σ_j log
// P^{t2i}_jj, both directions summed, softmax with ε. (L2RM's InfoNCE class is the same without ε.)
Tensor infonce_loss(const Tensor& scores, double tau = 0.05);

// Which label the reverse cross-entropy of L2RM's warm-up uses (docs/methods/l2rm.md §1.2 ⚠):
//   Code  — Y = I + ε everywhere (models.py RCE): log Y_ii = log(1 + ε), log Y_ij = log ε;
//   Paper — Y clipped to [ε, 1 − ε] (Eq. 5): log Y_ii = log(1 − ε), log Y_ij = log ε.   ε = 1e-7.
enum class RceLabel { Code, Paper };

// L2RM warm-up (models.py `RCE`, §1.2; paper Eq. 3 + 5 without the 0.5):
//   0.5 · (CE_i2t + CE_t2i + RCE_i2t + RCE_t2i),  CE = −(1/B) Σ_i log P_ii,  RCE = −(1/B) Σ_i Σ_j P_ij log Y_ij,
// softmax without ε. RCE ≈ −log ε · (1/B) Σ_i (1 − P_ii): a scaled MAE.
Tensor l2rm_warmup_loss(const Tensor& scores, double tau = 0.05, RceLabel label = RceLabel::Code);

// φ of RCL's complementary contrastive loss (`--loss`, §2.1), p a probability, ε = 1e-10:
//   Log −log(1 − p + ε) (default) · Tan tan(p) · Abs p (MAE) · Exp exp(p − 1) · Gce (1 − (1 − p + ε)^q)/q.
enum class ComplementaryPhi { Log, Tan, Abs, Exp, Gce };

// RCL `CCL` (§2.1; RCL Appendix A's complementary-label risk, Appendix B's MAE instance for `abs`):
//   L = Φ(P^{i2t}) + Φ(P^{t2i}),  Φ(P) = (1/B) Σ_i Σ_j N_ij φ(P_ij),
// softmax with ε; N = negative_mask [B, B] (bool or 0/1 floating, on S's device), applied as given to both
// P^{i2t} and P^{t2i} (row = query). Only negatives carry φ; the positive enters through the normaliser.
// q is GCE's exponent (RCL passes `--margin`, default 0.2) and is ignored by the other φ.
Tensor complementary_contrastive_loss(const Tensor& scores, double tau, ComplementaryPhi phi, double q,
                                      const Tensor& negative_mask);

// RCL's negative count per row (§2.1): B − 1 (all negatives) when ratio ≤ 0 or ratio ≥ 1 (default −1), else
// ⌊ratio·B⌋; a count of 0 is an error.
int64_t negatives_per_row(int64_t batch, double ratio);

// The CCL negative mask (bool [B, B] on `device`): per row, negatives_per_row(B, ratio) columns j ≠ i chosen
// uniformly at random — RCL draws uniform noise, pushes the diagonal below the row minimum and takes the top
// n. With all B − 1 negatives the mask is 1 − I and `gen` is not used; otherwise the noise is float64 from
// `gen` (B·B values, on the host so every device gets the same mask).
Tensor random_negative_mask(int64_t batch, double ratio, Generator& gen, Device device = Device::cpu());

// How the per-sample split loss reduces over negatives (`--split_loss`, §1.3 ⚠):
//   Mean    — the code (`hard_negative="eval_loss"`): the mean over all B entries of the row/column, the
//             zeroed positive included (divides by B, not B − 1);
//   Hardest — the paper (Eq. 4 refers to the hardest-negative triplet of Eq. 2): the largest violation.
enum class SplitLoss { Mean, Hardest };

// L2RM's per-sample loss for the clean/mismatched split (§1.3), shape [B]:
//   ℓ_i = reduce_{j≠i} [α − S_ii + S_ij]_+ + reduce_{j≠i} [α − S_ii + S_ji]_+
// (image i against captions j, then caption i against images j), α = margin.
Tensor per_sample_split_loss(const Tensor& scores, double margin = 0.2, SplitLoss mode = SplitLoss::Mean);

// The rematch loss between the batch's softmaxes and the OT plan (models.py, §1.6):
//   SymKl (default, `sym_KL_Divergence`) 0.5·[KL(Π^{i2t}‖P^{i2t}) + KL(P^{i2t}‖Π^{i2t}) + same for t2i];
//   Kl (`KL_Divergence`)                 KL(Π^{i2t}‖P^{i2t}) + KL(Π^{t2i}‖P^{t2i});
//   SoftInfoNce (`Soft_InfoNCE`)         −(1/B) Σ_i Σ_j Π^{i2t}_ij log P^{i2t}_ij + same for t2i;
//   Js (`JS_Divergence`)                 Σ over both directions of 0.5·[KL(M‖P) + KL(M‖Π)], M = (P + Π)/2 —
//                                        as coded (nn.KLDivLoss(input=log P, target=M) is KL(M‖P)), i.e. not
//                                        the textbook JS, which would be 0.5·[KL(P‖M) + KL(Π‖M)].
// KL(A‖B) = (1/B) Σ_i Σ_j A_ij (log A_ij − log B_ij) ("batchmean"). Π = max(plan, 1e-10), Π^{i2t} its rows
// normalised, Π^{t2i} its columns normalised and transposed; softmax with ε. The plan is a constant (any
// floating dtype and device; it is cast to S's): gradients reach S through P in every term, including where
// P is the KL's first argument (PyTorch differentiates kl_div w.r.t. its target).
enum class RematchLoss { SymKl, Kl, SoftInfoNce, Js };
Tensor rematch_kl_loss(const Tensor& scores, const Tensor& plan, double tau = 0.05,
                       RematchLoss variant = RematchLoss::SymKl);

// Flag values, as the switches are spelled on the command line: "code"|"paper", "log"|"tan"|"abs"|"exp"|"gce",
// "mean"|"hardest", "sym_kl"|"kl"|"soft_infonce"|"js". Anything else is an error listing the choices.
RceLabel parse_rce_label(const std::string& name);
ComplementaryPhi parse_complementary_phi(const std::string& name);
SplitLoss parse_split_loss(const std::string& name);
RematchLoss parse_rematch_loss(const std::string& name);

}  // namespace rematch::losses
