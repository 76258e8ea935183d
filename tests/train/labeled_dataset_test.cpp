// Labelled data: MRL's HDF5 layout (files written by h5py, tests/reference/labeled_fixture.py), our .npy layout,
// the HDF5 writer, bad inputs, and both label-noise rules with their files.
#include "train/data/labeled_dataset.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "test_util.h"

namespace rematch::data {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(REMATCH_FIXTURES) + "/labeled/";

class Labeled : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rematch_labeled_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_npy_split(const std::string& split, int64_t n, std::vector<int64_t> labels) {
    save_npy(path(split + "_imgs.npy"), test::random_tensor({n, 4}, DType::Float32, 1));
    save_npy(path(split + "_texts.npy"), test::random_tensor({n, 3}, DType::Float64, 2));
    save_npy(path(split + "_labels.npy"), from_vector(labels));
  }
  fs::path dir_;
};

TEST_F(Labeled, ReadsMrlHdf5WrittenByH5py) {
  const LabeledDataset d = load_labeled_h5(kFixtures + "mrl_tiny.h5", 2);
  EXPECT_EQ(d.num_classes, 3);
  EXPECT_EQ(d.train.size(), 6);
  EXPECT_EQ(d.train.images.sizes(), (Shape{6, 4}));
  EXPECT_EQ(d.train.texts.sizes(), (Shape{6, 3}));
  EXPECT_EQ(d.train.texts.dtype(), DType::Float32);
  EXPECT_EQ(d.train.image_labels, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));  // 1..3 shifted to 0..2
  EXPECT_EQ(d.train.text_labels, d.train.image_labels);
  EXPECT_EQ(d.train.texts.to_vector<float>()[4], 26.0f);  // (4 + 100) / 4
  // No valid_* datasets: validation = first valid_len test rows, test = the rest.
  EXPECT_EQ(d.valid.size(), 2);
  EXPECT_EQ(d.test.size(), 3);
  EXPECT_EQ(d.valid.image_labels, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(d.test.image_labels, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(d.test.images.to_vector<float>()[0], (200.0f + 8) / 4);  // row 2 of the file's test split
  EXPECT_EQ(load_labeled(kFixtures + "mrl_tiny.h5", 0).valid.size(), 0);
}

TEST_F(Labeled, WriterRoundTripsWithAValidationSplit) {
  LabeledDataset d = load_labeled_h5(kFixtures + "mrl_tiny.h5", 2);
  save_labeled_h5(path("copy.h5"), d);
  const LabeledDataset e = load_labeled_h5(path("copy.h5"), 99);  // valid_* present: valid_len unused
  EXPECT_EQ(e.num_classes, 3);
  EXPECT_EQ(e.valid.image_labels, d.valid.image_labels);
  EXPECT_EQ(e.test.text_labels, d.test.text_labels);
  EXPECT_TRUE(test::all_close(e.train.texts, d.train.texts, 0, 0));
  EXPECT_TRUE(test::all_close(e.test.images, d.test.images, 0, 0));
}

TEST_F(Labeled, ReadsTheNpyLayout) {
  write_npy_split("train", 5, {3, 4, 5, 3, 4});
  write_npy_split("test", 4, {5, 4, 3, 3});
  const LabeledDataset d = load_labeled(dir_.string(), 1);
  EXPECT_EQ(d.num_classes, 3);
  EXPECT_EQ(d.train.image_labels, (std::vector<int64_t>{0, 1, 2, 0, 1}));
  EXPECT_EQ(d.valid.size(), 1);
  EXPECT_EQ(d.test.size(), 3);
  EXPECT_EQ(d.train.texts.dtype(), DType::Float32);
  write_npy_split("valid", 2, {3, 5});
  EXPECT_EQ(load_labeled(dir_.string(), 1).test.size(), 4);  // valid_*.npy present
}

TEST_F(Labeled, MissingFilesAndDatasetsAreNamed) {
  EXPECT_THROWS_WITH(load_labeled_h5(path("none.h5"), 0), path("none.h5"), "does not exist");
  std::ofstream(path("text.h5")) << "not hdf5";
  EXPECT_THROWS_WITH(load_labeled_h5(path("text.h5"), 0), path("text.h5"), "cannot be opened as HDF5");
  EXPECT_THROWS_WITH(load_labeled_h5(kFixtures + "mrl_missing.h5", 0), "mrl_missing.h5", "test_texts_labels");
  write_npy_split("train", 2, {0, 1});
  EXPECT_THROWS_WITH(load_labeled_npy(dir_.string(), 0), path("test_imgs.npy"), "does not exist");
}

// Found by fuzz/labeled_h5_fuzz (inputs kept in fuzz/regressions): dataset valid_texts claims 2^53 elements in 16
// bytes of storage, and the reader allocated memory for them first (ASan: allocation-size-too-big); a compact
// dataset of 5 labels with no bytes stored made libhdf5 copy from a null pointer (SEGV).
TEST_F(Labeled, DatasetsLargerThanTheFileAreErrors) {
  const std::string file =
      std::string(REMATCH_FIXTURES) + "/../../fuzz/regressions/labeled_h5/huge_dataset_not_in_file.h5";
  EXPECT_THROWS_WITH(load_labeled_h5(file, 0), "huge_dataset_not_in_file.h5", "dataset 'valid_texts'",
                     "declares 9007199254740992 elements but holds 16 bytes");
  const std::string compact =
      std::string(REMATCH_FIXTURES) + "/../../fuzz/regressions/labeled_h5/compact_dataset_without_data.h5";
  EXPECT_THROWS_WITH(load_labeled_h5(compact, 0), "compact_dataset_without_data.h5", "dataset 'test_imgs_labels'",
                     "declares 5 elements but holds 0 bytes");
}

// Found by fuzz/labeled_h5_fuzz in CI's first run: train_texts_labels stored as an 8-byte integer whose
// significant bits start at bit 16384; libhdf5 converted it by reading far past its buffer (SIGBUS).
TEST_F(Labeled, MalformedNumberTypesAreErrors) {
  const std::string file = std::string(REMATCH_FIXTURES) + "/../../fuzz/regressions/labeled_h5/bad_bit_offset.h5";
  EXPECT_THROWS_WITH(load_labeled_h5(file, 0), "bad_bit_offset.h5", "dataset 'train_texts_labels'",
                     "malformed integer type (8 bytes, 0 bits from bit 16384)");
}

TEST_F(Labeled, NonIntegralLabelsAndDisagreeingRowCountsAreErrors) {
  EXPECT_THROWS_WITH(load_labeled_h5(kFixtures + "mrl_fractional.h5", 0), "mrl_fractional.h5", "train_imgs_labels",
                     "2.5", "not an integer");
  write_npy_split("train", 3, {0, 1});
  write_npy_split("test", 2, {0, 1});
  EXPECT_THROWS_WITH(load_labeled_npy(dir_.string(), 0), "split train", "3 images", "2 image labels");
}

// Found by fuzz/labeled_npy_fuzz: the valid rows were cut from the test split before its row counts were
// compared, so 2 test labels for 3 test images read past the labels (ASan: heap-buffer-overflow).
TEST_F(Labeled, TestRowsAreCheckedBeforeTheValidSplitIsCut) {
  write_npy_split("train", 3, {0, 1, 2});
  write_npy_split("test", 3, {0, 1});
  EXPECT_THROWS_WITH(load_labeled_npy(dir_.string(), 1), "split test", "3 images", "2 image labels");
}

// Labels that shifting by the lowest one would overflow.
TEST_F(Labeled, HugeLabelsAreOutOfRange) {
  write_npy_split("train", 2, {std::numeric_limits<int64_t>::min(), 0});
  write_npy_split("test", 1, {std::numeric_limits<int64_t>::max()});
  EXPECT_THROWS_WITH(load_labeled_npy(dir_.string(), 0), dir_.string(), "split train", "label -9223372036854775808",
                     "out of range");
}

TEST_F(Labeled, TestLabelsBeyondTheTrainingClassesAreOutOfRange) {
  write_npy_split("train", 3, {1, 2, 3});
  write_npy_split("test", 3, {1, 7, 2});
  EXPECT_THROWS_WITH(load_labeled_npy(dir_.string(), 1), dir_.string(), "split test", "label 7", "out of range",
                     "1..3");
  write_npy_split("test", 3, {1, 2, 2});
  EXPECT_THROWS_WITH(load_labeled_npy(dir_.string(), 4), "valid_len 4", "[0, 3]");
}

LabeledSplit toy_train(int64_t n, int64_t k) {
  LabeledSplit s;
  for (int64_t i = 0; i < n; ++i) s.image_labels.push_back(i % k);
  s.text_labels = s.image_labels;
  return s;
}

TEST(LabelNoise, SymmetricGivesOneLabelPerPairFromTheKClasses) {
  const LabeledSplit train = toy_train(1000, 10);
  const NoisyLabels n = inject_label_noise(train, 10, 0.4, parse_label_noise("symmetric"), 3);
  EXPECT_EQ(n.image_labels, n.text_labels);
  int64_t changed = 0;
  for (size_t i = 0; i < n.image_labels.size(); ++i) {
    EXPECT_GE(n.image_labels[i], 0);
    EXPECT_LT(n.image_labels[i], 10);
    changed += !n.image_clean[i];
  }
  EXPECT_LE(changed, 400);  // ⌊0.4·1000⌋ redrawn, about a tenth keep their class
  EXPECT_GE(changed, 320);
  EXPECT_EQ(n.source, "symmetric ratio=0.4 seed=3");
  EXPECT_EQ(inject_label_noise(train, 10, 0.4, LabelNoise::symmetric, 3).image_labels, n.image_labels);
}

TEST(LabelNoise, MrlDrawsPerModalityAndCanProduceLabelK) {
  const LabeledSplit train = toy_train(2000, 3);
  const NoisyLabels n = inject_label_noise(train, 3, 0.8, LabelNoise::mrl, 4);
  EXPECT_NE(n.image_labels, n.text_labels);
  int64_t k_count = 0;
  for (int64_t l : n.image_labels) {
    EXPECT_LE(l, 3);
    k_count += l == 3;
  }
  EXPECT_GT(k_count, 300);  // ~1600 / 4 draws land on the out-of-range label K
  EXPECT_THROWS_WITH(parse_label_noise("asym"), "symmetric", "mrl", "asym");
}

TEST_F(Labeled, LabelNoiseFilesInBothFormats) {
  const LabeledSplit train = toy_train(4, 3);
  std::ofstream(path("noise_labels_0.5_sym.json")) << "[[0, 2, 2, 0], [1, 1, 2, 3]]";
  EXPECT_THROWS_WITH(load_label_noise_file(path("noise_labels_0.5_sym.json"), train, 3, LabelNoise::symmetric),
                     "noise_labels_0.5_sym.json", "label 3 is 3", "outside 0..2");
  const NoisyLabels mrl = load_label_noise_file(path("noise_labels_0.5_sym.json"), train, 3, LabelNoise::mrl);
  EXPECT_EQ(mrl.text_labels, (std::vector<int64_t>{1, 1, 2, 3}));
  EXPECT_EQ(mrl.image_clean, (std::vector<uint8_t>{1, 0, 1, 1}));
  save_npy(path("pairs.npy"), from_vector(std::vector<int64_t>{0, 0, 0, 0}));
  const NoisyLabels pairs = load_label_noise_file(path("pairs.npy"), train, 3, LabelNoise::symmetric);
  EXPECT_EQ(pairs.image_labels, pairs.text_labels);
  const std::string saved = save_label_noise(mrl, dir_.string());
  EXPECT_EQ(load_label_noise_file(saved, train, 3, LabelNoise::mrl).text_labels, mrl.text_labels);
  save_npy(path("short.npy"), from_vector(std::vector<int64_t>{0, 1}));
  EXPECT_THROWS_WITH(load_label_noise_file(path("short.npy"), train, 3, LabelNoise::symmetric), "short.npy",
                     "length 2", "4 training labels");
  std::ofstream(path("bad.json")) << "{\"a\": 1}";
  EXPECT_THROWS_WITH(load_label_noise_file(path("bad.json"), train, 3, LabelNoise::symmetric), "bad.json",
                     "list");
  // Found by fuzz/label_noise_fuzz: a float label reached nlohmann's plain cast to int64 (undefined for 5.6e57).
  std::ofstream(path("float.json")) << "[[0, 1, 2, 0], [5.6e57, 0, 0, 0]]";
  EXPECT_THROWS_WITH(load_label_noise_file(path("float.json"), train, 3, LabelNoise::symmetric), "float.json",
                     "integer lists", "list 1 entry 0 is 5.6e+57");
  // 2^64 - 1 passes nlohmann's integer test as an unsigned number and wrapped to label -1 in the conversion.
  std::ofstream(path("wide.json")) << "[[0, 1, 2, 0], [0, 0, 18446744073709551615, 0]]";
  EXPECT_THROWS_WITH(load_label_noise_file(path("wide.json"), train, 3, LabelNoise::symmetric), "wide.json",
                     "list 1 entry 2 is 18446744073709551615 (past int64)");
}

}  // namespace
}  // namespace rematch::data
