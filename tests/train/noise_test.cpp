// Mismatch protocols: structure of the image- and caption-level noise, reproducibility from the seed, noise
// files of both formats and their bad inputs, the run-folder record, and split precision/recall.
#include "train/data/noise.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "test_util.h"

namespace rematch::data {
namespace {

namespace fs = std::filesystem;

class NoiseFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rematch_noise_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST(Noise, CleanCorrespondence) {
  const Correspondence c = clean_correspondence(3, 5);
  EXPECT_EQ(c.num_captions(), 15);
  EXPECT_EQ(c.caption_to_row[14], 2);
  EXPECT_EQ(c.num_noisy(), 0);
  EXPECT_EQ(c.source, "clean");
}

TEST(Noise, ImageLevelMovesWholeImagesByAPermutation) {
  const int64_t n_img = 1000;
  const Correspondence c = image_level_noise(n_img, 5, 0.2, 7);
  ASSERT_EQ(c.num_captions(), 5 * n_img);
  std::vector<int64_t> perm(n_img);
  for (int64_t i = 0; i < n_img; ++i) {
    perm[i] = c.caption_to_row[5 * i];
    for (int64_t k = 1; k < 5; ++k) EXPECT_EQ(c.caption_to_row[5 * i + k], perm[i]);  // captions move together
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < n_img; ++i) ASSERT_EQ(sorted[i], i);  // a bijection on images
  int64_t moved = 0;
  for (int64_t i = 0; i < n_img; ++i) moved += perm[i] != i;
  EXPECT_LE(moved, 200);  // ⌊0.2·1000⌋ shuffled, a few may land on themselves
  EXPECT_GE(moved, 190);
  EXPECT_EQ(c.num_noisy(), 5 * moved);
  EXPECT_EQ(c.source, "image-level ratio=0.2 seed=7");
}

TEST(Noise, CaptionLevelShufflesRowsAmongChosenCaptions) {
  const Correspondence c = caption_level_noise(400, 5, 0.5, 3);
  std::vector<int64_t> count(400, 0);
  for (int64_t r : c.caption_to_row) ++count[r];
  for (int64_t k : count) EXPECT_EQ(k, 5);  // the rows are only redistributed
  EXPECT_LE(c.num_noisy(), 1000);
  EXPECT_GE(c.num_noisy(), 990);
  // Unlike the image-level protocol, one image's captions usually end up with different rows.
  int64_t mixed = 0;
  for (int64_t i = 0; i < 400; ++i)
    mixed += !std::all_of(c.caption_to_row.begin() + 5 * i, c.caption_to_row.begin() + 5 * i + 5,
                          [&](int64_t r) { return r == c.caption_to_row[5 * i]; });
  EXPECT_GT(mixed, 300);
}

TEST(Noise, SameSeedSameNoiseOtherSeedOtherNoise) {
  EXPECT_EQ(image_level_noise(500, 5, 0.4, 11).caption_to_row, image_level_noise(500, 5, 0.4, 11).caption_to_row);
  EXPECT_NE(image_level_noise(500, 5, 0.4, 11).caption_to_row, image_level_noise(500, 5, 0.4, 12).caption_to_row);
  EXPECT_EQ(caption_level_noise(500, 1, 0.4, 11).caption_to_row,
            caption_level_noise(500, 1, 0.4, 11).caption_to_row);
  EXPECT_NE(caption_level_noise(500, 1, 0.4, 11).caption_to_row,
            caption_level_noise(500, 1, 0.4, 12).caption_to_row);
}

TEST(Noise, RatioZeroIsCleanAndOutOfRangeRatiosFail) {
  EXPECT_EQ(image_level_noise(50, 5, 0.0, 1).num_noisy(), 0);
  EXPECT_EQ(caption_level_noise(50, 5, 0.0, 1).num_noisy(), 0);
  EXPECT_THROWS_WITH(image_level_noise(50, 5, 1.5, 1), "ratio", "1.5");
  EXPECT_THROWS_WITH(caption_level_noise(50, 3, 0.2, 1), "im_div 1 or 5", "3");
}

TEST(Noise, MakeCorrespondenceDispatches) {
  NoiseOptions o;
  o.protocol = "caption";
  o.ratio = 0.3;
  o.seed = 5;
  EXPECT_EQ(make_correspondence(o, 100, 5).caption_to_row, caption_level_noise(100, 5, 0.3, 5).caption_to_row);
  o.protocol = "image";
  EXPECT_EQ(make_correspondence(o, 100, 5).caption_to_row, image_level_noise(100, 5, 0.3, 5).caption_to_row);
  o.protocol = "none";
  EXPECT_EQ(make_correspondence(o, 100, 5).num_noisy(), 0);
  o.protocol = "rcl";
  EXPECT_THROWS_WITH(make_correspondence(o, 100, 5), "none, image or caption", "rcl");
  o.noise_file = "/nonexistent/noise.npy";
  EXPECT_THROWS_WITH(make_correspondence(o, 100, 5), "/nonexistent/noise.npy", "does not exist");
}

TEST_F(NoiseFiles, ImagePermutationFileIsExpandedPerCaption) {
  save_npy(path("img.npy"), from_vector(std::vector<int64_t>{1, 0, 2}));
  const Correspondence c = load_noise_file(path("img.npy"), 3, 5);
  EXPECT_EQ(c.caption_to_row, (std::vector<int64_t>{1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2}));
  EXPECT_EQ(c.num_noisy(), 10);
  EXPECT_EQ(c.source, "file " + path("img.npy"));
}

TEST_F(NoiseFiles, CaptionMapFileIsUsedAsIs) {
  std::vector<int32_t> rows = {0, 0, 2, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 0};
  save_npy(path("cap.npy"), from_vector(rows));
  const Correspondence c = load_noise_file(path("cap.npy"), 3, 5);
  EXPECT_EQ(c.caption_to_row[2], 2);
  EXPECT_EQ(c.caption_to_row[14], 0);
  EXPECT_EQ(c.num_noisy(), 2);
}

TEST_F(NoiseFiles, WrongLengthNamesFileAndLengths) {
  save_npy(path("short.npy"), from_vector(std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_THROWS_WITH(load_noise_file(path("short.npy"), 3, 5), path("short.npy"), "[4]", "expected 3 entries",
                     "15 entries");
  save_npy(path("two_d.npy"), zeros({3, 5}, DType::Int64));
  EXPECT_THROWS_WITH(load_noise_file(path("two_d.npy"), 3, 5), path("two_d.npy"), "[3, 5]");
}

TEST_F(NoiseFiles, RowsOutOfRangeAndFloatFilesAreErrors) {
  save_npy(path("range.npy"), from_vector(std::vector<int64_t>{0, 3, 1}));
  EXPECT_THROWS_WITH(load_noise_file(path("range.npy"), 3, 5), path("range.npy"), "entry 1 is 3", "[0, 3)");
  save_npy(path("float.npy"), from_vector(std::vector<float>{0, 1, 2}));
  EXPECT_THROWS_WITH(load_noise_file(path("float.npy"), 3, 5), path("float.npy"), "float32", "int64");
  EXPECT_THROWS_WITH(load_noise_file(path("missing.npy"), 3, 5), path("missing.npy"), "does not exist");
}

TEST_F(NoiseFiles, SavedNoiseReloadsToTheSameCorrespondence) {
  const Correspondence c = caption_level_noise(40, 5, 0.5, 9);
  const std::string file = save_noise(c, dir_.string());
  EXPECT_EQ(file, path("noise_index.npy"));
  const Correspondence back = load_noise_file(file, 40, 5);
  EXPECT_EQ(back.caption_to_row, c.caption_to_row);
  EXPECT_EQ(back.clean, c.clean);
  EXPECT_THROWS_WITH(save_noise(c, path("no_such_dir")), "no_such_dir", "does not exist");
}

TEST(Noise, SplitQualityCountsBothClasses) {
  // truth:     clean clean clean noisy noisy
  // predicted: clean clean noisy clean noisy
  const SplitQuality q = split_quality({1, 1, 0, 1, 0}, {1, 1, 1, 0, 0});
  EXPECT_EQ(q.clean_kept, 2);
  EXPECT_EQ(q.noisy_kept, 1);
  EXPECT_EQ(q.clean_dropped, 1);
  EXPECT_EQ(q.noisy_dropped, 1);
  EXPECT_DOUBLE_EQ(q.clean_precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(q.clean_recall, 2.0 / 3);
  EXPECT_DOUBLE_EQ(q.noisy_precision, 0.5);
  EXPECT_DOUBLE_EQ(q.noisy_recall, 0.5);
  EXPECT_DOUBLE_EQ(q.accuracy, 0.6);
  const SplitQuality none = split_quality({1, 1}, {1, 1});  // no noisy pairs: 0, not NaN
  EXPECT_EQ(none.noisy_precision, 0.0);
  EXPECT_EQ(none.noisy_recall, 0.0);
  EXPECT_EQ(none.clean_precision, 1.0);
  EXPECT_THROWS_WITH(split_quality({1}, {1, 0}), "1 predictions", "2 pairs");
}

}  // namespace
}  // namespace rematch::data
