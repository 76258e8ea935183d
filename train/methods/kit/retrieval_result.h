// The EvalResult of a retrieval evaluation (method.h): the model-selection score rSum, the six recalls and the
// median ranks, and the table results.md and the terminal show; shared by the methods on image–caption pairs.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/tensor.h"
#include "train/eval/retrieval_metrics.h"
#include "train/methods/method.h"
#include "train/methods/train_config.h"

namespace rematch::train {

// The metrics `m` of the split named `label`.
EvalResult eval_result(const eval::RetrievalMetrics& m, const std::string& label);

// The final test of a run from the test split's similarities [images, captions]: its metrics, or with
// --coco_folds the mean over 5 folds of consecutive images (COCO 1K) plus the whole split's as full_* (5K).
EvalResult test_result(const Tensor& sims, int64_t captions_per_image, const CommonOptions& config);

// The validation of a method with two nets (`validate` of NCR and its heirs): rSum of the average of A's and B's
// matrices selects the model; each net's rSum is recorded as rsum_A and rsum_B.
EvalResult two_nets_validation_result(const Tensor& sims_a, const Tensor& sims_b, int64_t captions_per_image);

// The final test of a method with two nets (`evaluation.py: evalrank` of NCR and its heirs): the metrics of the
// average of A's and B's matrices, and each net's as <metric>_A and <metric>_B; the table shows each net alone
// first and the average, the method's reported numbers (`method` names them), last, where results.md ends.
EvalResult two_nets_test_result(const Tensor& sims_a, const Tensor& sims_b, int64_t captions_per_image,
                                const CommonOptions& config, const std::string& method);

}  // namespace rematch::train
