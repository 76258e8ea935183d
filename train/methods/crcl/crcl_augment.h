// CRCL's training-time augmentation of every training pair (docs/methods/crcl.md §9.3; QinYang79/CRCL
// `CRCL_NeurIPS23/data.py: PrecompDataset.__getitem__` with `a = True`, `process_caption`, `process_image_2`):
//   regions: each region with u < 0.2 (u ~ U[0, 1)) has its features set to 1e-10; all R slots stay (SGR/SAF's
//            BatchNorm over the regions needs them). ⚠ The official writes into the NumPy features in place
//            (`torch.Tensor(ndarray)` shares the buffer), so inside one loader worker an image's zeroed regions stay
//            zeroed for its later visits in the same epoch; rematch draws every visit afresh (the intent).
//   caption: each token, <start> and <end> included, is altered with probability 0.2; an altered token with
//            v = u / 0.2 becomes <mask> when v < 0.5 (50 %), a uniform vocabulary id in [0, V) when v < 0.6 (10 %),
//            and is deleted otherwise (40 %), as the code and its comments say. If every token would be deleted the
//            draw is repeated (the official would pass an empty caption, which pack_padded_sequence refuses).
// The random numbers come from a Philox generator (tensor/random.h): a (seed, offset) pair reproduces a batch, but
// the official masks (Python's `random`, NumPy) are not reproduced.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/random.h"
#include "train/data/batcher.h"

namespace rematch::train {

// regions [B, R, D] float (CPU): the batch's regions with CRCL's region augmentation applied (a new tensor).
Tensor crcl_augment_regions(const Tensor& regions, Generator& gen);

// One caption's word ids (markers included) -> the augmented ids (never empty).
std::vector<int64_t> crcl_augment_caption(const std::vector<int64_t>& ids, int64_t vocab_size, int64_t mask_id,
                                          Generator& gen);

// A CPU batch of Batcher::make_batch with both augmentations applied, then reordered by decreasing augmented
// caption length (stable), as the official collate_fn sorts what the dataset returned.
data::Batch crcl_augment_batch(const data::Batch& batch, int64_t vocab_size, int64_t mask_id, Generator& gen);

}  // namespace rematch::train
