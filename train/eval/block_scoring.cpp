#include "train/eval/block_scoring.h"

#include <algorithm>

namespace rematch::eval {

void score_blocks_into(const Tensor& out, const BlockScorer& scorer, BlockSize block, const BlockProgress& progress) {
  REMATCH_CHECK(out.defined() && out.dim() == 2, "score_blocks_into: result must be a 2-D tensor, got ",
                out.defined() ? out.describe() : std::string("undefined"));
  REMATCH_CHECK(out.dtype() == DType::Float32 || out.dtype() == DType::Float64,
                "score_blocks_into: result must be float32 or float64, got ", out.describe());
  REMATCH_CHECK(out.device().is_cpu(), "score_blocks_into: result must be on the host, got ", out.describe());
  REMATCH_CHECK(block.images >= 1 && block.captions >= 1, "score_blocks_into: block size must be positive, got ",
                block.images, " x ", block.captions);
  REMATCH_CHECK(static_cast<bool>(scorer), "score_blocks_into: no scoring function");
  const int64_t n_img = out.size(0), n_cap = out.size(1);
  const int64_t img_blocks = (n_img + block.images - 1) / block.images;
  const int64_t cap_blocks = (n_cap + block.captions - 1) / block.captions;
  int64_t done = 0;
  for (int64_t i0 = 0; i0 < n_img; i0 += block.images) {
    const int64_t i1 = std::min(n_img, i0 + block.images);
    for (int64_t c0 = 0; c0 < n_cap; c0 += block.captions) {
      const int64_t c1 = std::min(n_cap, c0 + block.captions);
      // Scoped so the block (and whatever the scorer kept alive through it) is released before the next call.
      {
        const Tensor scores = scorer(i0, i1, c0, c1);
        REMATCH_CHECK(scores.defined() && scores.dim() == 2 && scores.size(0) == i1 - i0 &&
                          scores.size(1) == c1 - c0,
                      "score_blocks_into: block images [", i0, ", ", i1, ") x captions [", c0, ", ", c1,
                      ") must be [", i1 - i0, ", ", c1 - c0, "], the scorer returned ",
                      scores.defined() ? scores.describe() : std::string("undefined"));
        REMATCH_CHECK(scores.dtype() == DType::Float32 || scores.dtype() == DType::Float64,
                      "score_blocks_into: block images [", i0, ", ", i1, ") x captions [", c0, ", ", c1,
                      ") must hold float scores, got ", scores.describe());
        kernels::copy_(kernels::narrow(kernels::narrow(out, 0, i0, i1 - i0), 1, c0, c1 - c0), scores);
      }
      if (progress) progress(++done, img_blocks * cap_blocks);
    }
  }
}

Tensor score_blocks(int64_t n_img, int64_t n_cap, const BlockScorer& scorer, BlockSize block, DType dtype,
                    const BlockProgress& progress) {
  REMATCH_CHECK(n_img >= 0 && n_cap >= 0, "score_blocks: sizes must be non-negative, got ", n_img, " x ", n_cap);
  Tensor out = empty({n_img, n_cap}, dtype);
  score_blocks_into(out, scorer, block, progress);
  return out;
}

}  // namespace rematch::eval
