// RCSL's training-time augmentations of an original (image, caption) pair (docs/methods/rcsl.md §3.1, QinYang79/RCSL
// data.py: process_image, process_caption with enhance = True). Mined items of the mining stage are used
// un-augmented, so callers apply these to view 0 only.
//   image:   each region is kept independently iff u > 0.2 (u ~ U[0, 1)), i.e. with probability 0.8; the draw
//            is repeated while at most one region survives (the intent of docs/methods/rcsl.md §3.1; the official test
//            `tmp.size(1) <= 1` looks at the feature width and never fires — a clear bug, fixed). An image
//            with fewer than 2 regions cannot satisfy it and is returned unchanged.
//   caption: each token, <start> and <end> included, is altered with probability 0.2; an altered token with
//            v = u / 0.2 becomes `mask_id` when v < 0.5 (50 %: <mask>, or <unk> under GloVe init), a uniform
//            vocabulary id in [0, V) when v < 0.8 (30 %), and is deleted otherwise (20 %). The code comments
//            say 10 % / 40 %; the arithmetic gives 30 % / 20 %. If every token would be deleted the draw is
//            repeated (the official code would emit an empty caption, which its encoder reads as one <pad>).
// Every random number comes from the given Philox generator (tensor/random.h), so a (seed, offset) pair
// reproduces the batch exactly; the streams are not Python's `random` / NumPy's, so the official masks
// themselves are not reproduced.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace rematch::models {

struct AugmentOptions {
  double region_drop = 0.2;  // data.py process_image(ag = 0.2)
  double token_alter = 0.2;  // data.py process_caption(ag = 0.2)
};

// One image: regions [R, D] -> the kept rows [R', D] in their original order.
Tensor augment_regions(const Tensor& regions, Generator& gen, const AugmentOptions& options = {});

// One caption of word ids (markers included) -> the augmented ids. `vocab_size` bounds the random ids;
// `mask_id` is the id of <mask> (or <unk>).
std::vector<int64_t> augment_caption(const std::vector<int64_t>& ids, int64_t vocab_size, int64_t mask_id,
                                     Generator& gen, const AugmentOptions& options = {});

struct PaddedBatch {
  Tensor data;     // [B, T_max, ...] zero-padded
  Tensor lengths;  // int64 [B]
};

// images [B, R, D] float with region counts `lengths` int64 [B] (undefined: every image has R regions): each
// image augmented in batch order, re-padded with zeros to the longest result.
PaddedBatch augment_region_batch(const Tensor& images, const Tensor& lengths, Generator& gen,
                                 const AugmentOptions& options = {});

// ids int64 [B, L] with lengths int64 [B]: each caption augmented in batch order, re-padded with <pad> (0).
PaddedBatch augment_caption_batch(const Tensor& ids, const Tensor& lengths, int64_t vocab_size, int64_t mask_id,
                                  Generator& gen, const AugmentOptions& options = {});

}  // namespace rematch::models
