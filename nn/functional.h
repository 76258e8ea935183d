// Loss and similarity functions of the retrieval methods, written from the differentiable op API so they run
// on any device and backpropagate to every floating input. The layer-shaped functional forms (linear,
// batch_norm, dropout) sit next to their modules.
#pragma once

#include "nn/module.h"

namespace rematch::nn {

// How a per-sample (or per-element) loss is reduced: None keeps it, Mean averages every entry, Sum adds them,
// BatchMean adds them and divides by the batch size (dim 0), as PyTorch's kl_div(reduction="batchmean").
enum class Reduction { None, Mean, Sum, BatchMean };

// logits [N, K], target [N] (int32/int64 class ids in [0, K)): -log_softmax(logits)[n, target_n] per sample,
// as F.cross_entropy.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction = Reduction::Mean);

// logits [N, K], probs [N, K] (rows are distributions): -Σ_k probs[n,k]·log_softmax(logits)[n,k] per sample,
// as F.cross_entropy with probability targets; differentiable w.r.t. both.
Tensor cross_entropy_soft(const Tensor& logits, const Tensor& probs, Reduction reduction = Reduction::Mean);

// KL(target || exp(input)) pointwise: target·(log target − input), and 0 wherever target = 0 (0·log 0 = 0),
// as F.kl_div(input, target, log_target=False), except where target = 0 and input = −inf (PyTorch: NaN).
// Differentiable w.r.t. both: d/dinput = −target, d/dtarget = log target + 1 − input; where target = 0 the
// target gradient is −input (the t·log t term is taken as flat there), where PyTorch returns NaN.
Tensor kl_div(const Tensor& input_log_probs, const Tensor& target_probs, Reduction reduction = Reduction::BatchMean);

// a [N, D], b [M, D] -> [N, M] cosine similarities l2n(a)·l2n(b)ᵀ, with l2n(x) = x / (‖x‖ + eps)
// (docs/backbones.md §1: eps on the norm, so a zero row gives zero similarities).
Tensor cosine_similarity_matrix(const Tensor& a, const Tensor& b, double eps = 1e-8);

// [margin + x]_+ elementwise.
Tensor hinge(const Tensor& x, double margin);

// VSE++ triplet loss on a square score matrix S [N, N] whose diagonal holds the positive pairs (rows: images,
// columns: captions), docs/backbones.md §8.1 (SGRAF model.py ContrastiveLoss), with d_i = S[i][i]:
//   max_violation:  Σ_i max_{j≠i} [α + S[i][j] − d_i]_+  +  Σ_j max_{i≠j} [α + S[i][j] − d_j]_+
//   otherwise:      the same with the maxima replaced by sums over all negatives.
// Summed over the batch, not averaged. Ties in a maximum send the gradient to the first index (PyTorch).
Tensor hardest_negative_triplet(const Tensor& scores, double margin = 0.2, bool max_violation = true);

}  // namespace rematch::nn
