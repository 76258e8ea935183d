// Batches of a toy precomp data set: epoch plans (coverage, reproducibility, drop_last, bucketing) and the
// tensors of a batch (regions of the paired rows, padded ids, lengths, indices).
#include "train/data/batcher.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "test_util.h"

namespace rematch::data {
namespace {

namespace fs = std::filesystem;

class BatcherTest : public ::testing::Test {
 protected:
  // 6 images × 5 captions; caption j has 1 + j % 7 words, so lengths (with markers) run 3..9.
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rematch_batcher_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "toy");
    std::vector<float> feats;
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t k = 0; k < 2 * 3; ++k) feats.push_back(static_cast<float>(r * 10 + k));
    save_npy((root_ / "toy" / "train_ims.npy").string(), from_vector(feats, {6, 2, 3}));
    std::ofstream caps(root_ / "toy" / "train_caps.txt");
    for (int64_t j = 0; j < 30; ++j) {
      for (int64_t w = 0; w <= j % 7; ++w) caps << (w ? " " : "") << "dog";
      caps << "\n";
    }
    caps.close();
    vocab_.add_word("dog");
    data_ = std::make_unique<PrecompDataset>(root_.string(), "toy", "train", vocab_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
  Vocabulary vocab_;
  std::unique_ptr<PrecompDataset> data_;
};

std::vector<int64_t> flatten(const std::vector<std::vector<int64_t>>& plan) {
  std::vector<int64_t> all;
  for (const auto& b : plan) all.insert(all.end(), b.begin(), b.end());
  return all;
}

TEST_F(BatcherTest, EpochPlanCoversEveryCaptionOnceAndReplaysFromTheSeed) {
  BatcherOptions o;
  o.batch_size = 8;
  o.seed = 42;
  const Batcher b(*data_, o);
  EXPECT_EQ(b.num_batches(), 4);
  const auto plan = b.epoch_plan(3);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan.back().size(), 6u);
  std::vector<int64_t> all = flatten(plan);
  std::sort(all.begin(), all.end());
  for (int64_t j = 0; j < 30; ++j) EXPECT_EQ(all[j], j);
  EXPECT_EQ(Batcher(*data_, o).epoch_plan(3), plan);  // a resumed run sees the same epoch
  EXPECT_NE(b.epoch_plan(4), plan);
  o.seed = 43;
  EXPECT_NE(Batcher(*data_, o).epoch_plan(3), plan);
}

TEST_F(BatcherTest, NoShuffleIsSequentialAndDropLastDropsTheTail) {
  BatcherOptions o;
  o.batch_size = 8;
  o.shuffle = false;
  o.drop_last = true;
  const Batcher b(*data_, o);
  EXPECT_EQ(b.num_batches(), 3);
  const auto plan = b.epoch_plan(0);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[1], (std::vector<int64_t>{8, 9, 10, 11, 12, 13, 14, 15}));
}

TEST_F(BatcherTest, BucketingGroupsSimilarLengths) {
  BatcherOptions o;
  o.batch_size = 5;
  o.bucket_pool = 6;  // one pool holds all 30 captions
  o.seed = 1;
  const Batcher b(*data_, o);
  const auto plan = b.epoch_plan(0);
  ASSERT_EQ(plan.size(), 6u);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const auto& batch : plan) {
    int64_t lo = 100, hi = 0;
    for (int64_t j : batch) lo = std::min(lo, data_->caption_length(j)), hi = std::max(hi, data_->caption_length(j));
    ranges.emplace_back(lo, hi);
  }
  for (size_t x = 0; x < ranges.size(); ++x)
    for (size_t y = x + 1; y < ranges.size(); ++y)
      EXPECT_TRUE(ranges[x].second <= ranges[y].first || ranges[y].second <= ranges[x].first)
          << "batches " << x << " and " << y << " overlap in length";
  std::vector<int64_t> all = flatten(plan);
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 30u);
}

TEST_F(BatcherTest, BatchTensorsFollowTheNoisyPairing) {
  std::vector<int64_t> rows(30);
  for (int64_t j = 0; j < 30; ++j) rows[j] = 5 - j / 5;  // every caption paired with the mirrored image
  BatcherOptions o;
  const Batcher b(*data_, o, rows);
  const Batch batch = b.make_batch({0, 6, 13});
  ASSERT_EQ(batch.size(), 3);
  // Sorted by decreasing length: caption 6 (7 words), 13 (7 words, stable), 0 (1 word).
  EXPECT_TRUE(test::values_equal(batch.caption_index, {6, 13, 0}));
  EXPECT_TRUE(test::values_equal(batch.lengths, {9, 9, 3}));
  EXPECT_TRUE(test::values_equal(batch.image_index, {4, 3, 5}));
  EXPECT_EQ(batch.captions.sizes(), (Shape{3, 9}));
  EXPECT_EQ(batch.captions.dtype(), DType::Int64);
  const std::vector<int64_t> ids = batch.captions.to_vector<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(ids.begin() + 18, ids.end()), (std::vector<int64_t>{1, 4, 2, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[8], 2);
  EXPECT_EQ(batch.regions.sizes(), (Shape{3, 2, 3}));
  EXPECT_EQ(batch.regions.to_vector<float>()[0], 40.0f);   // image row 4
  EXPECT_EQ(batch.regions.to_vector<float>()[12], 50.0f);  // image row 5
}

TEST_F(BatcherTest, SubsetOfCaptions) {
  BatcherOptions o;
  o.batch_size = 2;
  o.sort_within_batch = false;
  const Batcher b(*data_, o, {}, {3, 7, 11});
  EXPECT_EQ(b.num_batches(), 2);
  const std::vector<int64_t> all = flatten(b.epoch_plan(0));
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()), (std::set<int64_t>{3, 7, 11}));
  EXPECT_TRUE(test::values_equal(b.make_batch({11, 3}).caption_index, {11, 3}));
}

TEST_F(BatcherTest, BadInputs) {
  BatcherOptions o;
  EXPECT_THROWS_WITH((void)Batcher(*data_, o, std::vector<int64_t>(29, 0)), "29 entries", "30 captions");
  std::vector<int64_t> rows(30, 0);
  rows[17] = 6;
  EXPECT_THROWS_WITH((void)Batcher(*data_, o, rows), "caption 17", "image row 6", "[0, 6)");
  EXPECT_THROWS_WITH((void)Batcher(*data_, o, {}, {0, 30}), "caption index 30", "[0, 30)");
  o.batch_size = 0;
  EXPECT_THROWS_WITH((void)Batcher(*data_, o), "batch_size", "0");
  o.batch_size = 4;
  const Batcher b(*data_, o);
  EXPECT_THROWS_WITH(b.make_batch({}), "at least one caption");
  EXPECT_THROWS_WITH(b.epoch_plan(-1), "epoch", "-1");
}

}  // namespace
}  // namespace rematch::data
