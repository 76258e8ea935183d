// The precomp loader on small hand-made data sets: both im_div layouts, the CC152K TSV, the validation subset
// policies, and every kind of bad input (each error must name the file and the numbers).
#include "train/data/precomp_dataset.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace rematch::data {
namespace {

namespace fs = std::filesystem;

class PrecompTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("rematch_precomp_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "toy");
    vocab_.add_word("a");
    vocab_.add_word("dog");
    vocab_.add_word(".");
  }
  void TearDown() override { fs::remove_all(root_); }

  // [rows, regions, dim] float32 with value row*100 + region*10 + d, or `groups` distinct images each repeated.
  void write_images(const std::string& split, int64_t rows, int64_t regions = 3, int64_t dim = 2, int64_t repeat = 1) {
    std::vector<float> v;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < regions; ++k)
        for (int64_t d = 0; d < dim; ++d) v.push_back(static_cast<float>((r / repeat) * 100 + k * 10 + d));
    save_npy(path(split + "_ims.npy"), from_vector(v, {rows, regions, dim}));
  }
  void write_text(const std::string& name, const std::string& text) { std::ofstream(path(name)) << text; }
  void write_captions(const std::string& split, int64_t n) {
    std::string text;
    for (int64_t i = 0; i < n; ++i) text += "A dog number " + std::to_string(i) + ".\n";
    write_text(split + "_caps.txt", text);
  }
  std::string path(const std::string& name) const { return (root_ / "toy" / name).string(); }
  PrecompDataset load(const std::string& split, PrecompOptions o = {}) {
    return PrecompDataset(root_.string(), "toy", split, vocab_, o);
  }

  fs::path root_;
  Vocabulary vocab_;
};

TEST_F(PrecompTest, FiveCaptionsPerImageRow) {
  write_images("train", 4);
  write_captions("train", 20);
  const PrecompDataset d = load("train");
  EXPECT_EQ(d.num_captions(), 20);
  EXPECT_EQ(d.num_images(), 4);
  EXPECT_EQ(d.im_div(), 5);
  EXPECT_EQ(d.captions_per_image(), 5);
  EXPECT_EQ(d.num_regions(), 3);
  EXPECT_EQ(d.feature_dim(), 2);
  EXPECT_EQ(d.image_index(0), 0);
  EXPECT_EQ(d.image_index(14), 2);
  EXPECT_EQ(d.caption_text(7), "A dog number 7.");
  // <start> a dog <unk> <unk> . <end>
  EXPECT_EQ(d.caption_vector(7), (std::vector<int64_t>{1, 4, 5, 3, 3, 6, 2}));
  EXPECT_EQ(d.caption_length(7), 7);
  EXPECT_TRUE(test::values_equal(d.image(2), {200, 201, 210, 211, 220, 221}));
  const Tensor b = d.images({3, 0});
  EXPECT_EQ(b.sizes(), (Shape{2, 3, 2}));
  EXPECT_EQ(b.to_vector<float>()[0], 300.0f);
  EXPECT_EQ(b.to_vector<float>()[6], 0.0f);
  EXPECT_THROWS_WITH(d.image(4), "image row 4", "[0, 4)", "train_ims.npy");
  EXPECT_THROWS_WITH(d.caption_vector(20), "caption index 20", "[0, 20)");
}

TEST_F(PrecompTest, ReplicatedRowsMeanOneRowPerCaption) {
  write_images("test", 10, 3, 2, /*repeat=*/5);  // F30K test layout: each image stored once per caption
  write_captions("test", 10);
  const PrecompDataset d = load("test");
  EXPECT_EQ(d.im_div(), 1);
  EXPECT_EQ(d.num_images(), 10);
  EXPECT_EQ(d.image_index(7), 7);
  EXPECT_EQ(d.captions_per_image(), 5);
  PrecompOptions o;
  o.captions_per_image = 1;
  EXPECT_EQ(load("test", o).captions_per_image(), 1);
}

TEST_F(PrecompTest, TsvCaptionsAreTheSecondColumn) {
  write_images("test", 3);
  write_text("test_caps.tsv", "1100_19\ta dog .\n1100_20\t\"a \"\"quoted\"\" dog\"\r\n1100_21\t  a dog\textra\n");
  const PrecompDataset d = load("test");
  EXPECT_EQ(d.im_div(), 1);
  EXPECT_EQ(d.captions_per_image(), 1);
  EXPECT_EQ(d.caption_text(0), "a dog .");
  EXPECT_EQ(d.caption_text(1), "a \"quoted\" dog");
  EXPECT_EQ(d.caption_text(2), "a dog");
  EXPECT_EQ(d.captions_path(), path("test_caps.tsv"));
}

TEST_F(PrecompTest, ValidationSubsets) {
  write_images("dev", 6000, 1, 1);
  write_captions("dev", 6000);
  EXPECT_EQ(load("dev").num_captions(), 5000);  // sgraf: the first 5,000 captions
  PrecompOptions ncr;
  ncr.val_subset = parse_val_subset("ncr");
  const PrecompDataset d = load("dev", ncr);  // ncr: 1,000 × im_div captions
  EXPECT_EQ(d.num_captions(), 1000);
  EXPECT_EQ(d.num_images(), 1000);
  EXPECT_THROWS_WITH(parse_val_subset("scan"), "sgraf", "ncr", "scan");
}

TEST_F(PrecompTest, SmallDevSplitKeepsEverything) {
  write_images("dev", 3);
  write_captions("dev", 15);
  EXPECT_EQ(load("dev").num_captions(), 15);
}

TEST_F(PrecompTest, MissingFilesAreNamed) {
  EXPECT_THROWS_WITH(load("train"), path("train_ims.npy"), "does not exist");
  write_images("train", 4);
  EXPECT_THROWS_WITH(load("train"), path("train_caps.txt"), path("train_caps.tsv"), "does not exist");
  EXPECT_THROWS_WITH(load("val"), "split must be train, dev, test, testall or meta", "val");
}

TEST_F(PrecompTest, RowsMustFitTheImDivRule) {
  write_images("train", 4);
  write_captions("train", 7);
  EXPECT_THROWS_WITH(load("train"), path("train_ims.npy"), "4 rows", path("train_caps.txt"), "7 captions");
}

TEST_F(PrecompTest, FeaturesMustBeFloatRegions) {
  save_npy(path("train_ims.npy"), zeros({4, 2}, DType::Float32));
  write_captions("train", 4);
  EXPECT_THROWS_WITH(load("train"), path("train_ims.npy"), "float32[4, 2]", "[rows, regions, dim]");
  save_npy(path("train_ims.npy"), zeros({4, 1, 2}, DType::Int64));
  EXPECT_THROWS_WITH(load("train"), "int64[4, 1, 2]", "expected float [rows, regions, dim]");
}

// float64 features (NumPy's default dtype, which the official loader takes) become float32, said
// once on the notes stream.
TEST_F(PrecompTest, Float64FeaturesAreConvertedAndSaid) {
  save_npy(path("train_ims.npy"), full({4, 1, 2}, 0.1, DType::Float64));
  write_captions("train", 4);
  std::ostringstream notes;
  PrecompOptions options;
  options.notes = &notes;
  const PrecompDataset ds = load("train", options);
  EXPECT_EQ(ds.num_regions(), 1);
  EXPECT_EQ(notes.str(), "rematch: note: image features '" + path("train_ims.npy") +
                             "': float64 converted to float32 (the models compute in float32) on load\n");
}

TEST_F(PrecompTest, EmptyCaptionNamesFileAndLine) {
  write_images("train", 1);
  write_text("train_caps.txt", "a dog\na dog\n   \na dog\na dog\n");
  EXPECT_THROWS_WITH(load("train"), path("train_caps.txt"), "line 3", "empty caption");
  write_text("train_caps.txt", "a dog\na dog\n\na dog\na dog\n");
  EXPECT_THROWS_WITH(read_captions(path("train_caps.txt")), "line 3", "empty caption");
}

TEST_F(PrecompTest, TsvLineWithoutCaptionColumn) {
  write_text("test_caps.tsv", "1\ta dog\n2 a dog\n");
  EXPECT_THROWS_WITH(read_captions(path("test_caps.tsv")), path("test_caps.tsv"), "line 2", "1 column");
  write_text("test_caps.tsv", "1\t\"open quote\n");
  EXPECT_THROWS_WITH(read_captions(path("test_caps.tsv")), "line 1", "not closed");
}

TEST_F(PrecompTest, InvalidUtf8CaptionNamesFileAndLine) {
  write_images("train", 1);
  write_text("train_caps.txt", "a dog\na dog\na \xC3 dog\na dog\na dog\n");
  EXPECT_THROWS_WITH(load("train"), path("train_caps.txt"), "line 3", "UTF-8");
}

TEST_F(PrecompTest, CaptionFileWithoutFinalNewline) {
  write_text("x_caps.txt", "first\r\nsecond");
  EXPECT_EQ(read_captions(path("x_caps.txt")), (std::vector<std::string>{"first", "second"}));
}

TEST_F(PrecompTest, VocabularyBuilderReadsTrainAndDev) {
  write_text("train_caps.txt", "a cat\na cat\na cat\n");
  write_text("dev_caps.txt", "the cat\n");
  const Vocabulary v = build_precomp_vocabulary(root_.string(), "toy", 3);
  ASSERT_EQ(v.size(), 6);
  EXPECT_EQ(v.word(4), "a");
  EXPECT_EQ(v.word(5), "cat");
}

}  // namespace
}  // namespace rematch::data
