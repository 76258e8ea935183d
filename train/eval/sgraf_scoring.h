// The [N_img, N_cap] score matrix of a precomp split under one or more SGR/SAF models held in memory (a run's
// validation and test, `rematch score`/`eval --checkpoint`), filled block by block (block_scoring.h) in eval
// mode without a graph. Several models are averaged: an SGR and a SAF model give SGRAF (docs/backbones.md §4.8).
// Encodings are computed once: every caption block's words and TextSA vectors up front (the GRU is the costly
// part of a caption, so it is not re-run for every image block), each image block's regions and VisualSA
// vectors when the scorer reaches it. Inputs go to the models' device; the result is a host float32 matrix.
#pragma once

#include <vector>

#include "models/sgraf_model.h"
#include "train/data/precomp_dataset.h"
#include "train/eval/block_scoring.h"

namespace rematch::eval {

// Rows are distinct images (image i = the row of caption i · captions_per_image), columns all captions.
// The models are switched to eval mode and left there.
Tensor score_precomp_split(const std::vector<models::SgrafModel*>& nets, const data::PrecompDataset& split,
                           BlockSize block = {}, const BlockProgress& progress = {});

// Only rows [img_begin, img_end) (one rank's share in sharded scoring, parallel::block_rows): img_begin must be a
// multiple of block.images, so the blocks are those score_precomp_split computes for these rows, and the rows
// equal its rows byte for byte.
Tensor score_precomp_rows(const std::vector<models::SgrafModel*>& nets, const data::PrecompDataset& split,
                          int64_t img_begin, int64_t img_end, BlockSize block = {},
                          const BlockProgress& progress = {});

// Caption ids [n, L] (padded with <pad> = 0 to the longest of captions [begin, end)) and lengths [n].
std::pair<Tensor, Tensor> caption_block(const data::PrecompDataset& split, int64_t begin, int64_t end);

}  // namespace rematch::eval
