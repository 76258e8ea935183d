// The losses of RCSL (docs/methods/rcsl.md §3.3–3.4; QinYang79/RCSL model.py: ContrastiveLoss, SVSE.train_emb's
// lalign/lunif, SVSE.robust_mining_loss), written from the differentiable op API, so they run on any device,
// in float32 or float64, and backpropagate to the embeddings. Rows of a similarity matrix are images, columns
// captions. A batch is ordered with its K_p paired samples first (§3.3), so "paired" means rows/cols [0, K_p).
#pragma once

#include <cstdint>

#include "autograd/autograd.h"

namespace rematch::train::rcsl {

// Paper Eq. (5), as ContrastiveLoss.forward codes it: every entry of S outside the paired block
// [0, K_p) × [0, K_p) is replaced by −1 (no gradient), then the VSE++ hardest-negative triplet with margin α
// is summed over the K_p paired rows and the K_p paired columns only:
//   Σ_{i<K_p} max_{j≠i} [α − S_ii + S'_ij]_+  +  Σ_{i<K_p} max_{j≠i} [α − S_ii + S'_ji]_+.
// (The −1 entries still count as negatives, so a paired positive below α − 1 is pushed up by them; with
// K_p = 1 they are the only ones.) Ties in a maximum send the gradient to the first index, as PyTorch's
// max(dim). sims: square [B, B]; 0 <= num_paired <= B; K_p = 0 gives a zero scalar without a graph.
Tensor paired_triplet_loss(const Tensor& sims, int64_t num_paired, double margin = 0.2);

// Alignment A = (1/K_p) Σ_{i<K_p} ‖x_i − y_i‖² over the paired rows (§3.3; lalign with α = 2).
// images, captions: [B, E]; 1 <= num_paired <= B.
Tensor alignment_loss(const Tensor& images, const Tensor& captions, int64_t num_paired);

// Uniformity U(X) = log mean_{i<j} exp(−t ‖x_i − x_j‖²) over every row of x [B, E] (paper Eq. (3); lunif,
// t = 2), evaluated as logsumexp over the off-diagonal pairs − log(B(B−1)) with squared distances from the
// Gram matrix, so a large distance underflows to a finite value instead of log 0. Fewer than two rows have
// no pair: the official mean over an empty pdist is NaN; we return 0 (docs/methods/shared.md §0.4 rule 2: guard,
// don't copy).
Tensor uniformity_loss(const Tensor& x, double t = 2);

// L_reg = A + (U(images) + U(captions)) / 2 (paper Eq. (6); U over all B rows, A over the paired ones).
Tensor regularization_loss(const Tensor& images, const Tensor& captions, int64_t num_paired);

// Paper Eq. (8)–(9), robust_mining_loss: L_m(S) = ½ Σ_i [(1 − softmax_row(S/τ)_ii) + (1 − softmax_col(S/τ)_ii)],
// summed over the batch (a uniform S gives B·(1 − 1/B)). sims: square [B, B], B >= 1; tau > 0.
Tensor robust_mining_loss(const Tensor& sims, double tau);

// L_rcm = L_m(S¹) + L_m(S²) (paper Eq. (7)–(11), as train_emb assembles it, §3.4): with view 0 the original pair
// (images, captions) and view 1 the mined items (mined_images[i] = I'_i of caption i, mined_captions[i] = T'_i of
// image i), Ĩ = [images[:K_p]; mined_images[K_p:]] and T̃ = [captions[:K_p]; mined_captions[K_p:]],
//   S¹ = Ĩ · captionsᵀ  (rows: the pairs (I'_i, T_i) of B_v),   S² = T̃ · imagesᵀ  (rows: the pairs (I_i, T'_i) of B_t).
// Gradients flow into both views. All four are [B, E]; 0 <= num_paired <= B.
Tensor rcm_loss(const Tensor& images, const Tensor& captions, const Tensor& mined_images, const Tensor& mined_captions,
                int64_t num_paired, double tau);

// The two terms of rcm_loss apart (Eq. (8), (11)): t = L_rcm^t = L_m(B_t) = L_m(S²), the pairs (I_i, T'_i) with
// mined texts; v = L_rcm^v = L_m(B_v) = L_m(S¹), the pairs (I'_i, T_i) with mined images. rcm_loss = t + v.
struct RcmTerms {
  Tensor t, v;
};
RcmTerms rcm_terms(const Tensor& images, const Tensor& captions, const Tensor& mined_images,
                   const Tensor& mined_captions, int64_t num_paired, double tau);

}  // namespace rematch::train::rcsl
