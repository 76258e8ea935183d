// Whole-split encodings of a precomp data set under RCSL's VSE model (models/vse_model.h), in eval mode and
// without a graph: what validation, the test, RCSL's memory bank (docs/methods/rcsl.md §3.4) and RCSL-NC's per-sample
// losses need. In eval mode an item's embedding does not depend on its batch (BatchNorm uses its running
// statistics, no dropout), so items are encoded once, in blocks of `block` rows to bound memory. The model's
// train/eval mode is restored afterwards.
#pragma once

#include <cstdint>
#include <vector>

#include "models/vse_model.h"
#include "train/data/precomp_dataset.h"

namespace rematch::train::rcsl {

// f(I) of the given image rows (un-augmented, every region slot valid): [rows, E] on the model's device.
Tensor encode_image_rows(models::VseModel& model, const data::PrecompDataset& ds, const std::vector<int64_t>& rows,
                         int64_t block);

// g(T) of every caption of `ds`, in caption order: [N_cap, E] on the model's device.
Tensor encode_all_captions(models::VseModel& model, const data::PrecompDataset& ds, int64_t block);

// Cosine similarities of a split for retrieval metrics: rows are the distinct images (image i = the row of
// caption i · captions_per_image), columns all captions; a host float32 matrix (train.py validate).
Tensor split_similarities(models::VseModel& model, const data::PrecompDataset& ds, int64_t block);

}  // namespace rematch::train::rcsl
