// BiCro's soft correspondence labels (`BiCro/model.py: SGRAF.predict`, `ContrastiveLoss.forward` mode
// "predict_clean", `SIM_PAIR`, `SIM_SELE`; docs/methods/bicro.md §4), computed by the
// peer net in eval mode, without a graph, for one labelled batch (and, in the second half of co-training, one
// unlabelled batch):
//   anchors   ℓ_i = mean_j [α + S_ij − S_ii]_+ + mean_j [α + S_ji − S_ii]_+ (S the peer's [B, B] scores),
//             p_i = clamp(α − ℓ_i/2, 0, α); the ⌊B/10⌋ + 1 pairs of largest p are the anchors, the others are in
//             `noisy` in increasing p (the code's `idx = argsort(p)`, `idx[-ratio:]`, `idx[:-ratio]`; ties here
//             keep the batch order);
//   global    v_i = the mean of image i's region embeddings, t_i = the mean of caption i's word embeddings (its
//             first length_i), both from the peer's encoders (`EncoderSimilarity.glo_emb`);
//   BCSC      for a pair j and the anchors a: k_v = argmax_a cos(v_j, v_a), k_t = argmax_a cos(t_j, t_a) (the first
//             on ties); c_v = cos(v_j, v_kv), c_t = cos(t_j, t_kv) and d_{i→t} = min(c_v/c_t, c_t/c_v) as the
//             code writes it (c_v/c_t when that is < 1, else c_t/c_v); d_{t→i} the same from k_t;
//   labelled  c_j = 1/2 + (d_{i→t} + d_{t→i})/4, set to 0 when ≤ --noise_tem, clamped to [0, 1]; the anchors get 1;
//             the k-th non-anchor in `noisy` order gets c_k, the value of the k-th pair of the BATCH (the code's
//             `y_value.scatter_(0, noise_index, dis_f_n)` pairs index k with source k; the paper means pair j's
//             own value: the code is followed, docs/methods/bicro.md §4.3);
//   unlabelled n_j = (d_{i→t} + d_{t→i})/2 against the labelled batch's anchors, 0 when ≤ --noise_tem, clamped.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace rematch::train {

// Per-pair global embeddings of a batch: rows of `dim` values.
struct BicroGlobal {
  std::vector<double> image;  // [B, dim]
  std::vector<double> text;   // [B, dim]
  int64_t rows = 0;
  int64_t dim = 0;
};

// v_i and t_i from the encoders' outputs: images [B, R, E], captions [B, L, E], lengths [B] (any device/dtype).
BicroGlobal bicro_global(const Tensor& image_embeddings, const Tensor& caption_embeddings, const Tensor& lengths);

// The anchors of a batch from its peer scores S [B, B]: {anchors, noisy} as above.
struct BicroAnchors {
  std::vector<int64_t> anchors;
  std::vector<int64_t> noisy;
};
BicroAnchors bicro_anchors(const Tensor& scores, double margin);

// (d_{i→t}, d_{t→i}) of every row of `of` against the anchor rows of `anchor_from`.
std::vector<std::array<double, 2>> bicro_consistency(const BicroGlobal& anchor_from, const std::vector<int64_t>& anchors,
                                                     const BicroGlobal& of);

struct BicroLabels {
  std::vector<double> labeled;    // c, [B_l]
  std::vector<double> unlabeled;  // n, [B_u] (empty without an unlabelled batch)
  BicroAnchors anchors;
};
// `SGRAF.predict` (mode noise_soft): `unlabeled` null in the first half of co-training.
BicroLabels bicro_labels(const Tensor& labeled_scores, const BicroGlobal& labeled, const BicroGlobal* unlabeled,
                         double margin, double noise_tem);

}  // namespace rematch::train
