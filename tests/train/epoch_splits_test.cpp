// The per-epoch splits of a run folder (viz/epoch_splits.h): each kind written and read back (weights to 1/255),
// bad values refused with the file named, and the flagged set's precision and recall.
#include "viz/epoch_splits.h"

#include <filesystem>

#include "test_util.h"

namespace rematch::viz {
namespace {

namespace fs = std::filesystem;

class EpochSplitsTest : public test::TempDirTest {};

TEST_F(EpochSplitsTest, EachKindRoundTrips) {
  const std::string run = dir_.string();
  EXPECT_TRUE(read_epoch_splits(run).empty());
  write_epoch_split(run, {10, "l2rm", SplitKind::kept, {1, 0, 1, 1}});
  write_epoch_split(run, {2, "rcl", SplitKind::weight, {0.0, 0.25, 1.0, 0.5}});
  write_epoch_split(run, {3, "uotrcl", SplitKind::label, {4, 0, 199, 7}});
  EXPECT_LT(fs::file_size(dir_ / "splits" / "epoch_10.npy"), 200u);  // one byte a pair after the header
  const std::vector<EpochSplit> s = read_epoch_splits(run);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].epoch, 2);  // sorted by epoch
  EXPECT_EQ(s[0].method, "rcl");
  EXPECT_EQ(s[0].kind, SplitKind::weight);
  EXPECT_NEAR(s[0].values[1], 0.25, 0.5 / 255);
  EXPECT_EQ(s[0].values[2], 1.0);
  EXPECT_EQ(s[1].values, (std::vector<double>{4, 0, 199, 7}));
  EXPECT_EQ(s[2].values, (std::vector<double>{1, 0, 1, 1}));
  EXPECT_EQ(flagged_pairs(s[0]), (std::vector<uint8_t>{1, 1, 0, 0}));  // weight below 0.5
  EXPECT_EQ(flagged_pairs(s[2]), (std::vector<uint8_t>{0, 1, 0, 0}));
  EXPECT_EQ(flagged_pairs(s[1]), (std::vector<uint8_t>(4, 0)));
}

TEST_F(EpochSplitsTest, BadValuesAreRefused) {
  const std::string run = dir_.string();
  EXPECT_THROWS_WITH(write_epoch_split(run, {0, "x", SplitKind::kept, {1, 0.5}}), "epoch_0.npy", "pair 1");
  EXPECT_THROWS_WITH(write_epoch_split(run, {0, "x", SplitKind::weight, {1.5}}), "weights lie in [0, 1]");
  EXPECT_THROWS_WITH(write_epoch_split(run, {0, "x", SplitKind::label, {-1}}), "labels are integers");
  EXPECT_THROWS_WITH(write_epoch_split(run, {-1, "x", SplitKind::kept, {}}), "epoch must be >= 0");
}

TEST_F(EpochSplitsTest, DetectionQuality) {
  // 6 pairs, 3 truly mismatched (0, 1, 2); flagged 1, 2, 3: 2 caught, 1 false alarm.
  const Detection d = detection_quality(4, {0, 1, 1, 1, 0, 0}, {0, 0, 0, 1, 1, 1});
  EXPECT_EQ(d.epoch, 4);
  EXPECT_EQ(d.flagged, 3);
  EXPECT_EQ(d.truly_mismatched, 3);
  EXPECT_EQ(d.caught, 2);
  EXPECT_DOUBLE_EQ(d.precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(d.recall, 2.0 / 3);
  const Detection none = detection_quality(0, {0, 0}, {1, 1});
  EXPECT_EQ(none.precision, 0);
  EXPECT_EQ(none.recall, 0);
  EXPECT_THROWS_WITH(detection_quality(0, {0}, {1, 1}), "1 decisions for 2 pairs");
}

}  // namespace
}  // namespace rematch::viz
