// Block-by-block similarity: the blocks tile the matrix exactly once, results equal the one-shot matrix, and
// no two blocks are ever alive together (the memory guarantee COCO 5K relies on).
#include "train/eval/block_scoring.h"

#include <gtest/gtest.h>

#include <memory>

#include "test_util.h"

namespace rematch::eval {
namespace {

TEST(BlockScoring, TilesTheMatrixOnceAndEqualsTheFullMatrix) {
  const int64_t n_img = 23, n_cap = 31;
  const Tensor full_matrix = test::random_tensor({n_img, n_cap}, DType::Float32, 7);
  std::vector<int> visits(n_img * n_cap, 0);
  int64_t calls = 0, last_i0 = -1, last_c0 = -1;
  const BlockScorer scorer = [&](int64_t i0, int64_t i1, int64_t c0, int64_t c1) {
    EXPECT_LE(i1 - i0, 7);
    EXPECT_LE(c1 - c0, 5);
    // Row-major block order: image block first, then all caption blocks of it.
    EXPECT_TRUE(i0 > last_i0 || (i0 == last_i0 && c0 > last_c0));
    last_i0 = i0, last_c0 = c0;
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t c = c0; c < c1; ++c) ++visits[i * n_cap + c];
    ++calls;
    return kernels::narrow(kernels::narrow(full_matrix, 0, i0, i1 - i0), 1, c0, c1 - c0);
  };
  std::vector<std::pair<int64_t, int64_t>> progress;
  const Tensor s = score_blocks(n_img, n_cap, scorer, {7, 5}, DType::Float32,
                                [&](int64_t done, int64_t total) { progress.push_back({done, total}); });
  EXPECT_TRUE(test::all_close(s, full_matrix, 0, 0));
  for (int v : visits) EXPECT_EQ(v, 1);
  EXPECT_EQ(calls, 4 * 7);  // ceil(23/7) = 4 image blocks x ceil(31/5) = 7 caption blocks
  ASSERT_EQ(progress.size(), 28u);
  EXPECT_EQ(progress.back(), (std::pair<int64_t, int64_t>{28, 28}));
}

TEST(BlockScoring, ReleasesEachBlockBeforeScoringTheNext) {
  std::weak_ptr<TensorImpl> previous;
  int64_t alive_at_call = 0;
  const BlockScorer scorer = [&](int64_t i0, int64_t i1, int64_t c0, int64_t c1) {
    alive_at_call += previous.expired() ? 0 : 1;
    Tensor block = full({i1 - i0, c1 - c0}, static_cast<double>(i0 + c0), DType::Float32);
    previous = block.impl_ptr();
    return block;
  };
  const Tensor s = score_blocks(10, 50, scorer, {4, 8});
  EXPECT_EQ(alive_at_call, 0);
  EXPECT_FLOAT_EQ(s.data<float>()[9 * 50 + 49], 8 + 48);  // block (8, 48)
}

TEST(BlockScoring, WritesIntoAStridedFloat64ResultAndCastsTheBlocks) {
  Tensor big = zeros({6, 8}, DType::Float64);
  const Tensor view = kernels::transpose(big, 0, 1);  // [8, 6] with non-unit strides
  score_blocks_into(view, [](int64_t i0, int64_t i1, int64_t c0, int64_t c1) {
    Tensor b = empty({i1 - i0, c1 - c0}, DType::Float32);
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t c = c0; c < c1; ++c) b.data<float>()[(i - i0) * (c1 - c0) + (c - c0)] = float(10 * i + c);
    return b;
  }, {3, 4});
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t c = 0; c < 6; ++c) EXPECT_EQ(big.data<double>()[c * 8 + i], 10.0 * i + c);
}

TEST(BlockScoring, RejectsAWrongBlock) {
  const BlockScorer wrong_shape = [](int64_t i0, int64_t i1, int64_t c0, int64_t c1) {
    return zeros({i1 - i0, c1 - c0 + 1});
  };
  EXPECT_THROWS_WITH(score_blocks(5, 5, wrong_shape, {2, 2}), "block images [0, 2) x captions [0, 2)",
                     "must be [2, 2]");
  const BlockScorer integer = [](int64_t i0, int64_t i1, int64_t c0, int64_t c1) {
    return zeros({i1 - i0, c1 - c0}, DType::Int64);
  };
  EXPECT_THROWS_WITH(score_blocks(5, 5, integer), "float scores");
  EXPECT_THROWS_WITH(score_blocks(5, 5, integer, {0, 4}), "block size must be positive");
}

}  // namespace
}  // namespace rematch::eval
