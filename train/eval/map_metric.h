// Mean average precision of the labelled cross-modal benchmarks, exactly as MRL computes it
// (`main_noisy.py: fx_calc_map_label(train=database, train_labels, test=queries, test_label, k=0, 'cosine')`,
// docs/methods/uotrcl.md §4.4), the protocol UOT-RCL reports:
//   - every query ranks the whole database by cosine distance 1 − cos(q, x), ascending; among equal
//     distances the lower database index comes first (a stable argsort);
//   - relevance is label equality; for the top k items (k = 0: the whole database, "mAP@all")
//     AP_q = (1/R_q) Σ_n rel_n · (relevant items in the top n) / n, with R_q the relevant items in the top k,
//     and AP_q = 0 when there are none;
//   - mAP = the mean of AP_q over all queries.
// Cosines are computed in float64 (as scipy's cdist does) in blocks of queries, so a 23,661 × 23,661
// NUS-WIDE evaluation never holds the full distance matrix. A zero feature vector has no cosine and is an
// error naming the row.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace rematch::eval {

// queries [Q, d] and database [N, d] float32/float64 on any device; labels int32/int64 [Q] and [N].
double map_at_k(const Tensor& queries, const Tensor& query_labels, const Tensor& database,
                const Tensor& database_labels, int64_t k = 0);

struct CrossModalMap {
  double img2txt = 0;  // image queries against the text database
  double txt2img = 0;  // text queries against the image database
  double average() const { return 0.5 * (img2txt + txt2img); }  // MRL's model-selection score
};

// Both directions of MRL's multiview_test on a two-view split (features already in the common space).
CrossModalMap cross_modal_map(const Tensor& image_features, const Tensor& image_labels,
                              const Tensor& text_features, const Tensor& text_labels, int64_t k = 0);

}  // namespace rematch::eval
