// RCSL's training-time augmentations (models/augment.h, docs/methods/rcsl.md §3.1): the keep and alteration rates
// measured over many seeded draws, order preservation, the resampling guards, reproducibility from the Philox
// generator, the padded batch forms, and errors.
#include <algorithm>

#include "models/augment.h"
#include "test_util.h"

namespace rematch {
namespace {

using models::augment_caption;
using models::augment_regions;

// Region r of the test images holds the value r in every feature, so kept rows name themselves.
Tensor numbered_regions(int64_t R, int64_t D) {
  std::vector<float> v;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t d = 0; d < D; ++d) v.push_back(static_cast<float>(r));
  return from_vector(v, {R, D});
}

std::vector<int64_t> row_ids(const Tensor& kept) {
  std::vector<int64_t> ids;
  for (int64_t r = 0; r < kept.size(0); ++r) ids.push_back(static_cast<int64_t>(kept.data<float>()[r * kept.size(1)]));
  return ids;
}

TEST(Augment, RegionsAreKeptWithProbabilityPointEightInOrder) {
  Generator gen(1);
  const Tensor regions = numbered_regions(36, 3);
  int64_t kept_total = 0;
  const int64_t trials = 3000;
  for (int64_t t = 0; t < trials; ++t) {
    const std::vector<int64_t> ids = row_ids(augment_regions(regions, gen));
    ASSERT_GE(ids.size(), 2u);
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()) && std::adjacent_find(ids.begin(), ids.end()) == ids.end());
    kept_total += static_cast<int64_t>(ids.size());
  }
  // 108,000 Bernoulli(0.8) draws: standard error of the rate 0.0012.
  EXPECT_NEAR(static_cast<double>(kept_total) / (36.0 * trials), 0.8, 0.005);
}

TEST(Augment, AtLeastTwoRegionsSurvive) {
  Generator gen(2);
  const Tensor two = numbered_regions(2, 2);
  for (int t = 0; t < 200; ++t) EXPECT_EQ(augment_regions(two, gen).size(0), 2);  // redrawn until both stay
  const Tensor three = numbered_regions(3, 2);
  for (int t = 0; t < 500; ++t) EXPECT_GE(augment_regions(three, gen).size(0), 2);
  // A single region cannot satisfy the rule and is returned as it is.
  EXPECT_TRUE(test::all_close(augment_regions(numbered_regions(1, 2), gen), numbered_regions(1, 2), 0, 0));
}

TEST(Augment, CaptionAlterationRates) {
  // Original ids 100..129 (distinct), <mask> = 5, a vocabulary of 10^12 so random ids are recognisable:
  // expected per token 0.8 kept, 0.2·0.5 = 0.1 masked, 0.2·0.3 = 0.06 random, 0.2·0.2 = 0.04 deleted.
  std::vector<int64_t> caption(30);
  for (int64_t i = 0; i < 30; ++i) caption[static_cast<size_t>(i)] = 100 + i;
  Generator gen(3);
  int64_t kept = 0, masked = 0, random = 0, deleted = 0;
  const int64_t trials = 8000;  // 240,000 tokens: standard errors below 0.001
  for (int64_t t = 0; t < trials; ++t) {
    const std::vector<int64_t> out = augment_caption(caption, 1000000000000, 5, gen);
    deleted += 30 - static_cast<int64_t>(out.size());
    std::vector<int64_t> originals;
    for (int64_t id : out) {
      if (id == 5) {
        ++masked;
      } else if (id >= 100 && id < 130) {
        ++kept;
        originals.push_back(id);
      } else {
        ++random;
      }
    }
    EXPECT_TRUE(std::is_sorted(originals.begin(), originals.end()));  // order of the surviving words is kept
  }
  const double n = 30.0 * trials;
  EXPECT_NEAR(kept / n, 0.8, 0.005);
  EXPECT_NEAR(masked / n, 0.1, 0.004);
  EXPECT_NEAR(random / n, 0.06, 0.004);
  EXPECT_NEAR(deleted / n, 0.04, 0.004);
}

TEST(Augment, CaptionsNeverBecomeEmpty) {
  Generator gen(4);
  // With one token and the alteration probability near 1, deletion (20 % of alterations) happens often; the
  // draw is repeated instead of returning an empty caption.
  models::AugmentOptions options;
  options.token_alter = 0.99;
  for (int t = 0; t < 2000; ++t) EXPECT_EQ(augment_caption({7}, 50, 3, gen, options).size(), 1u);
}

TEST(Augment, SameGeneratorStateSameResult) {
  const Tensor regions = numbered_regions(36, 2);
  const std::vector<int64_t> caption = {1, 10, 11, 12, 13, 14, 15, 2};
  Generator a(42), b(42), c(43);
  const std::vector<int64_t> ra = row_ids(augment_regions(regions, a));
  EXPECT_EQ(ra, row_ids(augment_regions(regions, b)));
  EXPECT_EQ(augment_caption(caption, 100, 4, a), augment_caption(caption, 100, 4, b));
  EXPECT_EQ(a.offset(), b.offset());
  EXPECT_NE(ra, row_ids(augment_regions(regions, c)));
}

TEST(Augment, BatchFormsRepadAndReportLengths) {
  // Image b has rows valued 10·b + r; image 1 has 3 real regions of 4.
  std::vector<float> v;
  for (int b = 0; b < 3; ++b)
    for (int r = 0; r < 4; ++r) v.push_back(static_cast<float>(10 * b + r));
  const Tensor images = from_vector(v, {3, 4, 1});
  Generator gen(5), same(5);
  const models::PaddedBatch out = models::augment_region_batch(images, from_vector<int64_t>({4, 3, 4}), gen);
  const std::vector<int64_t> lengths = out.lengths.to_vector<int64_t>();
  ASSERT_EQ(lengths.size(), 3u);
  EXPECT_EQ(out.data.size(1), *std::max_element(lengths.begin(), lengths.end()));
  // Row by row the batch form equals the single-image form drawn in batch order from the same stream.
  for (int64_t b = 0; b < 3; ++b) {
    const Tensor one = augment_regions(kernels::narrow(kernels::select(images, 0, b), 0, 0, b == 1 ? 3 : 4), same);
    ASSERT_EQ(one.size(0), lengths[static_cast<size_t>(b)]);
    EXPECT_TRUE(test::all_close(kernels::narrow(kernels::select(out.data, 0, b), 0, 0, one.size(0)), one, 0, 0));
    const std::vector<float> row = kernels::contiguous(kernels::select(out.data, 0, b)).to_vector<float>();
    for (size_t r = static_cast<size_t>(one.size(0)); r < row.size(); ++r) EXPECT_EQ(row[r], 0.0f);  // zero padding
    for (size_t r = 0; r < static_cast<size_t>(one.size(0)); ++r) EXPECT_NE(row[r], 13.0f);  // never padding input
  }

  const Tensor ids = from_vector<int64_t>({1, 7, 8, 9, 2, 1, 6, 2, 0, 0}, {2, 5});
  Generator cg(6), cs(6);
  const models::PaddedBatch caps = models::augment_caption_batch(ids, from_vector<int64_t>({5, 3}), 20, 3, cg);
  const std::vector<int64_t> first = augment_caption({1, 7, 8, 9, 2}, 20, 3, cs);
  const std::vector<int64_t> second = augment_caption({1, 6, 2}, 20, 3, cs);
  EXPECT_EQ(caps.lengths.to_vector<int64_t>(),
            (std::vector<int64_t>{static_cast<int64_t>(first.size()), static_cast<int64_t>(second.size())}));
  const int64_t T = caps.data.size(1);
  EXPECT_EQ(T, static_cast<int64_t>(std::max(first.size(), second.size())));
  const std::vector<int64_t> flat = caps.data.to_vector<int64_t>();
  for (size_t i = 0; i < static_cast<size_t>(T); ++i) {
    EXPECT_EQ(flat[i], i < first.size() ? first[i] : 0);
    EXPECT_EQ(flat[static_cast<size_t>(T) + i], i < second.size() ? second[i] : 0);
  }
}

TEST(Augment, RejectsBadArguments) {
  Generator gen(7);
  models::AugmentOptions bad;
  bad.region_drop = 1.0;
  EXPECT_THROWS_WITH(augment_regions(numbered_regions(4, 2), gen, bad), "region_drop");
  EXPECT_THROWS_WITH(augment_regions(zeros({4}), gen), "[R, D]");
  EXPECT_THROWS_WITH(augment_caption({1, 2}, 10, 10, gen), "mask id 10");
  EXPECT_THROWS_WITH(models::augment_caption_batch(from_vector<int64_t>({1, 2}, {1, 2}), from_vector<int64_t>({3}),
                                                   10, 3, gen),
                     "lengths[0] = 3");
}

}  // namespace
}  // namespace rematch
