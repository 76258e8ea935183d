// The evaluation of the class-labelled methods (mrl, dscmr; uotrcl has its own copy): embed a split's two views
// block by block without gradients, then MRL's mAP@all in both directions (train/eval/map_metric.h, MRL
// `main_noisy.py: multiview_test`), their mean as the model-selection score, and a one-row table.
#pragma once

#include <functional>
#include <string>

#include "train/data/labeled_dataset.h"
#include "train/methods/method.h"

namespace rematch::train {

// `encode_images` / `encode_texts` map a block of raw features (float32, on the CPU) to common-space rows.
EvalResult evaluate_labeled_split(const data::LabeledSplit& split, int64_t block,
                                  const std::function<Tensor(const Tensor&)>& encode_images,
                                  const std::function<Tensor(const Tensor&)>& encode_texts,
                                  const std::string& method, const std::string& split_name);

}  // namespace rematch::train
