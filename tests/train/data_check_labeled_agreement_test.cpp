// `rematch data check` on the class-labelled layouts refuses what training refuses, naming the file: for each
// damaged .npy folder below, the checker reports an error naming the file and saying what is wrong, the check at
// a run's start (check_for_training) throws the same, and training's own reading refuses the folder too (the
// loader, then the labelled methods' demand for non-empty valid and test splits). Cases from the sweep of the
// labelled half: float64 features beyond float32, feature widths that differ between splits or are 0, a valid
// split without one of its files, an empty test split, sparse or huge class ids, a single class. Then an HDF5 file
// with a partial valid split, and the warning for class ids far sparser than the labels in use.
#include <hdf5.h>

#include <filesystem>
#include <functional>
#include <sstream>

#include "test_util.h"
#include "train/data/data_check.h"
#include "train/data/labeled_dataset.h"
#include "train/synth/labeled_world.h"

namespace rematch::data {
namespace {

namespace fs = std::filesystem;

class DataCheckLabeledAgreementTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    make_folder();
  }
  // The intact folder anew: 40 / 12 / 16 pairs of 4 classes, images 8-d, texts 6-d.
  void make_folder() {
    fs::remove_all(path("data"));
    synth::LabeledWorldConfig c;
    c.train_samples = 40, c.valid_samples = 12, c.test_samples = 16, c.classes = 4, c.img_dim = 8, c.txt_dim = 6;
    folder_ = synth::write_labeled_world(synth::make_labeled_world(c), path("data"));
  }
  std::string file(const std::string& name) const { return folder_ + "/" + name; }
  // Labels of a split: labels[i % labels.size()] for each of its n pairs.
  void labels(const std::string& split, int64_t n, const std::vector<int64_t>& cycle) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(cycle[static_cast<size_t>(i) % cycle.size()]);
    save_npy(file(split + "_labels.npy"), from_vector(v));
  }
  std::string check_errors() const {
    DataCheckOptions o;
    o.data_path = folder_;
    const DataCheckReport r = check_data(o);
    std::string out;
    for (const CheckItem& i : r.items)
      if (i.severity == Severity::error) out += i.path + " (" + i.status + "): " + i.problem + "\n";
    return out;
  }
  std::string training_start() const {
    TrainingDataFiles f;
    f.data_path = folder_;
    f.labeled = true;
    f.valid_len = 0;
    std::ostringstream log;
    try {
      check_for_training(f, log);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  // What training reads: the loader, then the non-empty valid and test splits every labelled method demands at
  // its start (train/methods/mrl/mrl_method.cpp, dscmr, sdml, uotrcl).
  std::string training_reads() const {
    try {
      const LabeledDataset d = load_labeled(folder_, 0);
      if (d.valid.size() == 0 || d.test.size() == 0) return "an empty valid or test split";
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  std::string folder_;
};

TEST_F(DataCheckLabeledAgreementTest, EachDamageIsRefusedByTheCheckTheRunStartAndTheLoaderNamingTheFile) {
  ASSERT_EQ(check_errors(), "");
  ASSERT_EQ(training_start(), "");
  ASSERT_EQ(training_reads(), "");
  struct Case {
    std::string name, file, said;  // the file every refusal must name, and a part of the checker's problem
    std::function<void()> damage;
    bool loader_names_file = true;  // false: the loader reads it, a method refuses it
  };
  const std::vector<Case> cases = {
      {"float64 feature beyond float32", file("test_imgs.npy"), "row 1 holds 1e+300",
       [&] {
         std::vector<double> v(16 * 8, 0.25);
         v[10] = 1e300;
         save_npy(file("test_imgs.npy"), from_vector(v, {16, 8}));
       }},
      {"test texts narrower than train's", file("test_texts.npy"), "has 5 features per row",
       [&] { save_npy(file("test_texts.npy"), from_vector(std::vector<float>(16 * 5, 0.5f), {16, 5})); }},
      {"zero-width image features", file("train_imgs.npy"), "0 features per row",
       [&] {
         for (const auto& [split, n] : {std::pair<std::string, int64_t>{"train", 40}, {"valid", 12}, {"test", 16}})
           save_npy(file(split + "_imgs.npy"), from_vector(std::vector<float>{}, {n, 0}));
       }},
      {"valid split without its images", file("valid_imgs.npy"), "does not exist, but",
       [&] { fs::remove(file("valid_imgs.npy")); }},
      {"empty test split", folder_, "the test split of",
       [&] {
         save_npy(file("test_imgs.npy"), from_vector(std::vector<float>{}, {0, 8}));
         save_npy(file("test_texts.npy"), from_vector(std::vector<float>{}, {0, 6}));
         save_npy(file("test_labels.npy"), from_vector(std::vector<int64_t>{}));
       },
       false},
      {"huge class ids", file("train_labels.npy"), "largest id 3000000000",
       [&] {
         for (const auto& [split, n] : {std::pair<std::string, int64_t>{"train", 40}, {"valid", 12}, {"test", 16}})
           labels(split, n, {0, 1000000000, 2000000000, 3000000000});
       }},
      {"sparse class ids", file("train_labels.npy"), "largest id 100000",
       [&] {
         for (const auto& [split, n] : {std::pair<std::string, int64_t>{"train", 40}, {"valid", 12}, {"test", 16}})
           labels(split, n, {0, 1, 2, 100000});
       }},
      {"a single class", file("train_labels.npy"), "a single class",
       [&] {
         for (const auto& [split, n] : {std::pair<std::string, int64_t>{"train", 40}, {"valid", 12}, {"test", 16}})
           labels(split, n, {3});
       }},
  };
  for (const Case& c : cases) {
    make_folder();
    c.damage();
    const std::string said = check_errors(), start = training_start(), read = training_reads();
    EXPECT_NE(said.find(c.file), std::string::npos) << c.name << ": the check does not name the file:\n" << said;
    EXPECT_NE(said.find(c.said), std::string::npos) << c.name << ":\n" << said;
    EXPECT_NE(start.find(c.file), std::string::npos) << c.name << ": the run's start check:\n" << start;
    EXPECT_NE(start.find(c.said), std::string::npos) << c.name << ": the run's start check:\n" << start;
    EXPECT_NE(read, "") << c.name << ": training reads a folder the check refuses";
    if (c.loader_names_file) EXPECT_NE(read.find(c.file), std::string::npos) << c.name << ": the loader:\n" << read;
  }
}

// MRL's HDF5 layout with a valid split missing its texts: the other valid datasets were silently ignored, and
// validation came from the test rows.
TEST_F(DataCheckLabeledAgreementTest, AnHdf5ValidSplitWithoutItsTextsIsNamed) {
  LabeledDataset d = load_labeled(folder_, 0);
  const std::string h5 = path("partial.h5");
  save_labeled_h5(h5, d);
  {
    const hid_t f = H5Fopen(h5.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    ASSERT_GE(H5Ldelete(f, "valid_texts", H5P_DEFAULT), 0);
    H5Fclose(f);
  }
  DataCheckOptions o;
  o.data_path = h5;
  o.valid_len = 4;
  const DataCheckReport r = check_data(o);
  std::string said;
  for (const CheckItem& i : r.items) said += i.problem + "\n";
  EXPECT_FALSE(r.ok()) << said;
  EXPECT_NE(said.find("but not 'valid_text(s)'"), std::string::npos) << said;
  EXPECT_THROWS_WITH(load_labeled(h5, 4), h5, "'valid_imgs_deep'", "but not 'valid_text(s)'");
}

// Class ids that leave most classes empty, within the bound of one class per training pair: a warning.
TEST_F(DataCheckLabeledAgreementTest, SparseClassIdsWithinTheBoundAreAWarning) {
  for (const auto& [split, n] : {std::pair<std::string, int64_t>{"train", 40}, {"valid", 12}, {"test", 16}})
    labels(split, n, {0, 1, 30});
  DataCheckOptions o;
  o.data_path = folder_;
  const DataCheckReport r = check_data(o);
  EXPECT_TRUE(r.ok()) << format_report(r);
  ASSERT_EQ(r.count(Severity::warning), 1) << format_report(r);
  EXPECT_NE(format_report(r).find("use 3 of their 31 class ids"), std::string::npos) << format_report(r);
}

}  // namespace
}  // namespace rematch::data
