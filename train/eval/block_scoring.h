// Evaluation-time similarity matrix filled block by block (docs/backbones.md §5.3, `shard_attn_scores`): a
// scoring function is called on one (image range, caption range) block at a time, its result is copied into
// a preallocated [N_img, N_cap] host matrix and dropped before the next call. However large the split (COCO
// 5K: 5,000 × 25,000 = 1.25·10⁸ pairs), at most one block of pair activations is alive — the scorer's —
// plus the result matrix itself. Blocking does not change results in eval mode (BatchNorm uses running
// statistics), so the block size is only a memory/speed knob.
#pragma once

#include <cstdint>
#include <functional>

#include "tensor/tensor.h"

namespace rematch::eval {

// Scores of images [img_begin, img_end) against captions [cap_begin, cap_end): a float tensor
// [img_end - img_begin, cap_end - cap_begin] on any device.
using BlockScorer = std::function<Tensor(int64_t img_begin, int64_t img_end, int64_t cap_begin, int64_t cap_end)>;
// Called after each block with (blocks done, blocks in all), e.g. for a progress line.
using BlockProgress = std::function<void(int64_t done, int64_t total)>;

// Block extent in images × captions. SGRAF/RCL use 100 × 100 and NCR/DECL/L2RM test code 1,000 × 1,000;
// 100 × 100 keeps an SGR block's activations under a gigabyte.
struct BlockSize {
  int64_t images = 100;
  int64_t captions = 100;
};

// Fills `out` (a 2-D float32/float64 host tensor, any strides) block by block: image blocks in order, and
// within each all caption blocks in order, so a scorer may cache the current image block's encodings.
// A block of the wrong shape or dtype kind is an error naming the block.
void score_blocks_into(const Tensor& out, const BlockScorer& scorer, BlockSize block = {},
                       const BlockProgress& progress = {});

// A new [n_img, n_cap] host matrix of `dtype` filled by score_blocks_into.
Tensor score_blocks(int64_t n_img, int64_t n_cap, const BlockScorer& scorer, BlockSize block = {},
                    DType dtype = DType::Float32, const BlockProgress& progress = {});

}  // namespace rematch::eval
