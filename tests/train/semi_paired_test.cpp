// RCSL's semi-paired split: the chosen images keep their captions, the rest are permuted among themselves.
#include "train/data/semi_paired.h"

#include <algorithm>
#include <set>

#include "test_util.h"

namespace rematch::data {
namespace {

TEST(SemiPaired, PairedImagesKeepTheirCaptionsAndTheRestArePermuted) {
  const int64_t n_img = 100;
  const SemiPairedSplit s = semi_paired_split(n_img, 5, 30, 123);
  const Correspondence& c = s.correspondence;
  ASSERT_EQ(c.num_captions(), 500);
  ASSERT_EQ(s.paired_images.size(), 30u);
  const std::set<int64_t> paired(s.paired_images.begin(), s.paired_images.end());
  EXPECT_EQ(paired.size(), 30u);
  std::set<int64_t> unpaired_targets;
  for (int64_t i = 0; i < n_img; ++i) {
    const int64_t row = c.caption_to_row[5 * i];
    for (int64_t k = 1; k < 5; ++k) EXPECT_EQ(c.caption_to_row[5 * i + k], row);
    if (paired.count(i)) {
      EXPECT_EQ(row, i);
    } else {
      EXPECT_EQ(paired.count(row), 0u) << "unpaired image " << i << " took paired image " << row;
      unpaired_targets.insert(row);
    }
  }
  EXPECT_EQ(unpaired_targets.size(), 70u);  // a permutation of the unpaired images
  // Labels: paired iff the caption keeps its own image (fixed points of the shuffle included).
  EXPECT_EQ(s.paired_captions.size() + s.unpaired_captions.size(), 500u);
  EXPECT_GE(s.paired_captions.size(), 150u);
  EXPECT_LT(s.paired_captions.size(), 200u);
  for (int64_t j : s.paired_captions) EXPECT_TRUE(c.clean[j]);
  for (int64_t j : s.unpaired_captions) EXPECT_EQ(c.caption_to_row[j] == j / 5, false);
  EXPECT_TRUE(std::is_sorted(s.paired_captions.begin(), s.paired_captions.end()));
  EXPECT_EQ(c.source, "semi-paired paired_length=30 seed=123");
}

TEST(SemiPaired, SeedReproducesTheSplit) {
  EXPECT_EQ(semi_paired_split(80, 5, 20).correspondence.caption_to_row,
            semi_paired_split(80, 5, 20, 123).correspondence.caption_to_row);
  EXPECT_NE(semi_paired_split(80, 5, 20, 1).correspondence.caption_to_row,
            semi_paired_split(80, 5, 20, 2).correspondence.caption_to_row);
}

TEST(SemiPaired, AllOrNothingPaired) {
  EXPECT_EQ(semi_paired_split(40, 1, 40).unpaired_captions.size(), 0u);
  const SemiPairedSplit none = semi_paired_split(400, 1, 0, 5);
  EXPECT_LT(none.paired_captions.size(), 10u);  // only fixed points of a random permutation
}

TEST(SemiPaired, PairedLengthOutOfRange) {
  EXPECT_THROWS_WITH(semi_paired_split(10, 5, 11), "paired_length 11", "[0, 10]");
  EXPECT_THROWS_WITH(semi_paired_split(10, 5, -1), "paired_length -1");
}

}  // namespace
}  // namespace rematch::data
