// Bidirectional retrieval metrics of the image–caption benchmarks (docs/backbones.md §7, `evaluation.py: i2t,
// t2i` of SGRAF/NCR/RCL/DECL/L2RM) from a similarity matrix S [N_img, N_cap], rows images, columns captions,
// captions c·i .. c·i + c − 1 belonging to image i (c = captions per image: 5 for COCO/F30K, 1 for CC152K).
//
// Ranks are 0-based positions in the list sorted by decreasing score:
//   i2t: for image i, the position of the best-placed of its c captions;
//   t2i: for caption j, the position of image j / c.
// Ties: the reference sorts with NumPy `argsort(row)[::-1]`; a stable ascending sort reversed puts, among
// equal scores, the higher index first. So the position of item j is
//   #{k : s_k > s_j} + #{k > j : s_k = s_j},
// which is the reference's position exactly whenever its sort is stable (always for the small arrays NumPy
// insertion-sorts; its introsort leaves large ties in no defined order). Unlike "count strictly larger",
// this never rewards a degenerate model: a constant matrix gets the poor ranks the reference gives it, not
// R@1 = 100.
//
// R@K = 100 · #{rank < K} / count; medr = floor(median(rank)) + 1 (NumPy median: mean of the two middle
// values for an even count); meanr = mean(rank) + 1; rSum = the six R@K summed (max 600).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace rematch::eval {

struct RetrievalMetrics {
  double i2t_r1 = 0, i2t_r5 = 0, i2t_r10 = 0, i2t_medr = 0, i2t_meanr = 0;
  double t2i_r1 = 0, t2i_r5 = 0, t2i_r10 = 0, t2i_medr = 0, t2i_meanr = 0;
  double rsum() const;
};

// 0-based ranks, one per image (i2t) or per caption (t2i). `sims` is float32 or float64, on any device
// (copied to the host), with N_cap = N_img · captions_per_image; a NaN or infinite score is an error.
std::vector<int64_t> i2t_ranks(const Tensor& sims, int64_t captions_per_image);
std::vector<int64_t> t2i_ranks(const Tensor& sims, int64_t captions_per_image);

struct RankSummary {
  double r1 = 0, r5 = 0, r10 = 0, medr = 0, meanr = 0;
};
RankSummary summarize_ranks(const std::vector<int64_t>& ranks);

// Both directions on the whole matrix (F30K 1K, COCO 5K, CC152K).
RetrievalMetrics retrieval_metrics(const Tensor& sims, int64_t captions_per_image);

// COCO 1K: images cut into `folds` equal consecutive folds (with their captions), metrics per fold, then
// every field averaged over the folds; rsum() of the result is the sum of the averaged R@K
// (docs/backbones.md §9 item 6: the reference's printed 5-fold rSum is a bug we do not copy).
std::vector<RetrievalMetrics> per_fold_metrics(const Tensor& sims, int64_t captions_per_image, int64_t folds);
RetrievalMetrics mean_metrics(const std::vector<RetrievalMetrics>& folds);

// A fixed-width table: one row per direction with R@1 R@5 R@10 medr meanr, then rSum.
std::string format_metrics_table(const RetrievalMetrics& m);
// One-line JSON object with the keys i2t_r1 i2t_r5 i2t_r10 t2i_r1 t2i_r5 t2i_r10 rsum i2t_medr i2t_meanr
// t2i_medr t2i_meanr.
std::string metrics_json(const RetrievalMetrics& m);

}  // namespace rematch::eval
