// `rematch data check`'s checker on small synthetic folders held against a small "official release": a correct
// folder passes, and a truncated, mis-shaped or mis-counted file, a wrong vocabulary, text that is not UTF-8 and a
// noise file whose real ratio is not the one in its name are each an error that names its file.
#include "train/data/data_check.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "train/data/noise.h"
#include "train/data/vocab.h"
#include "train/synth/labeled_world.h"

namespace rematch::data {
namespace {

namespace fs = std::filesystem;

// A release of the toy size: 20 training images with 5 captions each, dev 4 images replicated per caption (as
// F30K ships dev and test), test 4 images with 5 captions, 3 regions of 4 features.
const PrecompRelease kToy{"toy_precomp",
                          "Toy",
                          {{"train", 20, 100, true}, {"dev", 4, 20, true}, {"test", 4, 20, true}},
                          3,
                          4,
                          5,
                          ".txt",
                          7,
                          "the toy bundle"};

class DataCheckTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_directories(dir_ / "toy_precomp");
    fs::create_directories(dir_ / "vocab");
    write_images("train", 20);
    write_captions("train", 100);
    write_images("dev", 20, 3, 4, /*repeat=*/5);
    write_captions("dev", 20);
    write_images("test", 4);
    write_captions("test", 20);
    Vocabulary v;
    for (const char* w : {"a", "dog", "."}) v.add_word(w);
    v.save(path("vocab/toy_precomp_vocab.json"));
  }
  std::string file(const std::string& name) const { return path("toy_precomp/" + name); }
  void write_images(const std::string& split, int64_t rows, int64_t regions = 3, int64_t dim = 4,
                    int64_t repeat = 1) {
    std::vector<float> v;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < regions * dim; ++k) v.push_back(static_cast<float>((r / repeat) * 100 + k));
    save_npy(file(split + "_ims.npy"), from_vector(v, {rows, regions, dim}));
  }
  void write_captions(const std::string& split, int64_t n, const std::string& caption = "A dog.") {
    std::ofstream f(file(split + "_caps.txt"), std::ios::binary);
    for (int64_t i = 0; i < n; ++i) f << caption << "\n";
  }
  DataCheckReport check(std::vector<std::string> noise_files = {}) const {
    DataCheckOptions o;
    o.data_path = dir_.string();
    o.data_name = "toy_precomp";
    o.release = &kToy;
    o.noise_files = std::move(noise_files);
    return check_data(o);
  }
  // The one error of the report; it must name `path` and say `status`.
  static ::testing::AssertionResult one_error(const DataCheckReport& r, const std::string& path,
                                              const std::string& status) {
    std::vector<const CheckItem*> errors;
    for (const CheckItem& i : r.items)
      if (i.severity == Severity::error) errors.push_back(&i);
    if (errors.size() != 1) return ::testing::AssertionFailure() << errors.size() << " errors:\n" << format_report(r);
    const CheckItem& e = *errors[0];
    if (e.path != path || e.status != status || e.problem.find(path) == std::string::npos)
      return ::testing::AssertionFailure() << "error on " << e.path << " (" << e.status << "): " << e.problem;
    return ::testing::AssertionSuccess();
  }
  const CheckItem& item(const DataCheckReport& r, const std::string& path) const {
    for (const CheckItem& i : r.items)
      if (i.path == path) return i;
    ADD_FAILURE() << "no item for " << path << "\n" << format_report(r);
    static const CheckItem none;
    return none;
  }
};

TEST_F(DataCheckTest, CorrectFolderPasses) {
  const DataCheckReport r = check();
  EXPECT_TRUE(r.ok()) << format_report(r);
  EXPECT_EQ(r.count(Severity::warning), 0) << format_report(r);
  EXPECT_EQ(r.release, "Toy");
  EXPECT_EQ(r.items.size(), 7u);  // 3 splits x (features, captions) + the vocabulary
  EXPECT_EQ(item(r, file("train_ims.npy")).content, "float32 [20, 3, 4]");
  EXPECT_EQ(item(r, file("train_caps.txt")).numbers.at("captions_per_image"), 5);
  // dev has one row per caption, each image replicated: still 5 captions per image, as in F30K.
  EXPECT_EQ(item(r, file("dev_caps.txt")).numbers.at("captions_per_image"), 5);
  EXPECT_EQ(item(r, file("test_caps.txt")).numbers.at("oov_share"), 0);
  EXPECT_NE(format_report(r).find("0 errors, 0 warnings: ready to train"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(report_json(r));
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_EQ(j["items"].size(), 7u);
}

// MSCN's meta split (docs/methods/mscn.md §4): checked as the others when the folder has one, and a broken one is
// named.
TEST_F(DataCheckTest, AMetaSplitIsCheckedWhenPresent) {
  write_images("meta", 6);
  write_captions("meta", 6);
  const DataCheckReport r = check();
  EXPECT_TRUE(r.ok()) << format_report(r);
  EXPECT_EQ(r.items.size(), 9u);
  EXPECT_EQ(item(r, file("meta_ims.npy")).content, "float32 [6, 3, 4]");
  EXPECT_EQ(item(r, file("meta_caps.txt")).numbers.at("captions_per_image"), 1);
  write_captions("meta", 7);  // neither one caption per row nor five
  EXPECT_FALSE(check().ok());
}

TEST_F(DataCheckTest, TruncatedFeaturesAreNamed) {
  fs::resize_file(file("train_ims.npy"), fs::file_size(file("train_ims.npy")) - 40);
  const DataCheckReport r = check();
  EXPECT_TRUE(one_error(r, file("train_ims.npy"), "truncated"));
  EXPECT_NE(item(r, file("train_ims.npy")).problem.find("needs"), std::string::npos);
}

TEST_F(DataCheckTest, TruncatedHeaderIsNamed) {
  fs::resize_file(file("test_ims.npy"), 30);
  EXPECT_TRUE(one_error(check(), file("test_ims.npy"), "unreadable"));
}

TEST_F(DataCheckTest, MisShapedFeaturesAreNamed) {
  write_images("dev", 20, 3, 5, 5);  // 5 features a region where the release has 4
  EXPECT_TRUE(one_error(check(), file("dev_ims.npy"), "wrong shape"));
  save_npy(file("dev_ims.npy"), from_vector(std::vector<float>(20 * 12, 1.0f), {20, 12}));  // no region axis
  EXPECT_TRUE(one_error(check(), file("dev_ims.npy"), "wrong shape"));
}

TEST_F(DataCheckTest, MisShapedFeaturesWithoutReleaseDisagreeWithTrain) {
  write_images("test", 4, 2, 4);
  DataCheckOptions o;
  o.data_path = dir_.string();
  o.data_name = "toy_precomp";
  const DataCheckReport r = check_data(o);
  EXPECT_EQ(r.release, "");
  EXPECT_TRUE(one_error(r, file("test_ims.npy"), "wrong shape"));
}

TEST_F(DataCheckTest, CaptionsThatDoNotFitTheRowsAreNamed) {
  write_captions("train", 99);
  const DataCheckReport r = check();
  EXPECT_TRUE(one_error(r, file("train_caps.txt"), "wrong count"));
  EXPECT_NE(item(r, file("train_caps.txt")).problem.find("99"), std::string::npos);
}

TEST_F(DataCheckTest, ConsistentFilesOfAnotherSizeThanTheReleaseAreMisCounted) {
  // A partial download: 19 images with their 95 captions load fine but are not the official split.
  write_images("train", 19);
  write_captions("train", 95);
  const DataCheckReport r = check();
  EXPECT_EQ(r.count(Severity::error), 2) << format_report(r);
  EXPECT_EQ(item(r, file("train_ims.npy")).status, "wrong count");
  EXPECT_EQ(item(r, file("train_caps.txt")).status, "wrong count");
}

TEST_F(DataCheckTest, UnreplicatedOneRowPerCaptionIsTheWrongPairing) {
  write_images("dev", 20);  // 20 different images for 20 captions: 1 caption each, not the release's 5
  EXPECT_TRUE(one_error(check(), file("dev_caps.txt"), "wrong pairing"));
}

TEST_F(DataCheckTest, MissingFilesSayWhereTheyComeFrom) {
  fs::remove(file("test_caps.txt"));
  const DataCheckReport r = check();
  EXPECT_TRUE(one_error(r, file("test_caps.txt"), "missing"));
  EXPECT_EQ(item(r, file("test_caps.txt")).source, "the toy bundle");
  fs::remove(path("vocab/toy_precomp_vocab.json"));
  const DataCheckReport v = check();
  bool vocab_named = false;
  for (const CheckItem& i : v.items)
    if (i.role == "vocabulary") vocab_named = i.status == "missing" && i.source.find("vocab.zip") != std::string::npos;
  EXPECT_TRUE(vocab_named) << format_report(v);
}

TEST_F(DataCheckTest, WrongVocabularyAndBadEncodingAreNamed) {
  write_captions("test", 20, "Zebras graze quietly.");
  DataCheckReport r = check();
  EXPECT_TRUE(one_error(r, file("test_caps.txt"), "vocabulary"));
  EXPECT_GT(item(r, file("test_caps.txt")).numbers.at("oov_share"), 0.5);
  write_captions("test", 20, "A dog \xff.");
  r = check();
  EXPECT_TRUE(one_error(r, file("test_caps.txt"), "not UTF-8"));
}

TEST_F(DataCheckTest, NoiseFilesAreCheckedAgainstTheRatioInTheirName) {
  // Good files in both official formats: RCL's per image, L2RM's the same noise per caption, NCR's caption level.
  const Correspondence img = image_level_noise(20, 5, 0.4, 3);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < 20; ++i) perm.push_back(img.caption_to_row[i * 5]);
  save_npy(file("noise_inx_0.4.npy"), from_vector(perm));
  fs::create_directories(dir_ / "noise_index");
  save_npy(path("noise_index/toy_precomp_0.4.npy"), from_vector(img.caption_to_row));
  save_npy(path("ncr_0.2.npy"), from_vector(caption_level_noise(20, 5, 0.2, 4).caption_to_row));
  DataCheckReport r = check({path("ncr_0.2.npy")});
  EXPECT_TRUE(r.ok()) << format_report(r);
  EXPECT_NE(item(r, file("noise_inx_0.4.npy")).content.find("one entry per image"), std::string::npos);
  EXPECT_NE(item(r, path("noise_index/toy_precomp_0.4.npy")).content.find("as L2RM ships it"), std::string::npos);
  EXPECT_NE(item(r, path("ncr_0.2.npy")).content.find("caption level"), std::string::npos);
  EXPECT_NEAR(item(r, file("noise_inx_0.4.npy")).numbers.at("named_ratio"), 0.4, 1e-12);

  // A 0.8 file saved under the name of 0.4.
  const Correspondence heavy = image_level_noise(20, 5, 0.8, 5);
  perm.clear();
  for (int64_t i = 0; i < 20; ++i) perm.push_back(heavy.caption_to_row[i * 5]);
  save_npy(file("noise_inx_0.4.npy"), from_vector(perm));
  r = check();
  EXPECT_TRUE(one_error(r, file("noise_inx_0.4.npy"), "ratio differs"));
  EXPECT_GT(item(r, file("noise_inx_0.4.npy")).numbers.at("realised_ratio"), 0.6);
}

TEST_F(DataCheckTest, NoiseFilesThatAreNoIndexAreNamed) {
  save_npy(file("noise_inx_0.2.npy"), from_vector(std::vector<int64_t>(19, 0)));
  EXPECT_TRUE(one_error(check(), file("noise_inx_0.2.npy"), "wrong length"));
  std::vector<int64_t> v(20);
  for (int64_t i = 0; i < 20; ++i) v[i] = i;
  v[7] = 20;
  save_npy(file("noise_inx_0.2.npy"), from_vector(v));
  EXPECT_TRUE(one_error(check(), file("noise_inx_0.2.npy"), "not an index"));
  save_npy(file("noise_inx_0.2.npy"), from_vector(std::vector<float>(20, 0.0f)));
  EXPECT_TRUE(one_error(check(), file("noise_inx_0.2.npy"), "wrong dtype"));
  fs::remove(file("noise_inx_0.2.npy"));
  EXPECT_TRUE(one_error(check({path("nowhere_0.2.npy")}), path("nowhere_0.2.npy"), "missing"));
}

TEST_F(DataCheckTest, RatioInName) {
  using check_detail::ratio_in_name;
  EXPECT_DOUBLE_EQ(ratio_in_name("data/f30k_precomp/noise_inx_0.2.npy"), 0.2);
  EXPECT_DOUBLE_EQ(ratio_in_name("noise_index/coco_precomp_0.8.npy"), 0.8);
  EXPECT_DOUBLE_EQ(ratio_in_name("noise_labels_0.4_sym.json"), 0.4);
  EXPECT_DOUBLE_EQ(ratio_in_name("run/noise_index.npy"), -1);
  // A minus sign makes no ratio of 0.5 (it was read as one); a '-' after a letter or digit separates.
  EXPECT_DOUBLE_EQ(ratio_in_name("noise_labels_-0.5_sym.json"), -1);
  EXPECT_DOUBLE_EQ(ratio_in_name("-0.5.npy"), -1);
  EXPECT_DOUBLE_EQ(ratio_in_name("f30k-0.2.npy"), 0.2);
  EXPECT_DOUBLE_EQ(ratio_in_name("noise_0.4_-0.5.npy"), 0.4);
  EXPECT_DOUBLE_EQ(ratio_in_name("noise_" + std::string(400, '9') + ".npy"), -1);  // std::stod threw here
}

TEST_F(DataCheckTest, TrainingStartThrowsNamingEachProblemOfTheFilesItReads) {
  std::ostringstream log;
  TrainingDataFiles f;
  f.data_path = dir_.string();
  f.data_name = "toy_precomp";
  check_for_training(f, log);
  // A broken noise file the run does not read, and a split it does not test on, stop nothing.
  save_npy(file("noise_inx_0.2.npy"), from_vector(std::vector<int64_t>(19, 0)));
  write_images("testall", 3);
  write_captions("testall", 14);
  check_for_training(f, log);
  f.noise_file = file("noise_inx_0.2.npy");
  EXPECT_THROWS_WITH(check_for_training(f, log), file("noise_inx_0.2.npy"), "1 problem(s)");
  f.noise_file.clear();
  fs::resize_file(file("dev_ims.npy"), 200);
  write_captions("train", 99);
  EXPECT_THROWS_WITH(check_for_training(f, log), file("dev_ims.npy"), file("train_caps.txt"), "2 problem(s)");
}

TEST_F(DataCheckTest, AtTrainingStartASubsetOfTheReleaseIsAWarningButItsOwnFilesStillStopIt) {
  // Half the release's training images with their captions: consistent files of another size. data check calls
  // them errors (a partial download?); a run starts, with a warning for each, naming the file.
  write_images("train", 10);
  write_captions("train", 50);
  const DataCheckReport r = check();
  ASSERT_EQ(r.count(Severity::error), 2) << format_report(r);
  for (const CheckItem& i : r.items)
    if (i.severity == Severity::error) EXPECT_TRUE(i.against_release) << i.problem;
  TrainingDataFiles f;
  f.data_path = dir_.string();
  f.data_name = "toy_precomp";
  f.release = &kToy;
  std::ostringstream log;
  check_for_training(f, log);
  EXPECT_NE(log.str().find("warning: '" + file("train_ims.npy") + "' has 10 rows"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("warning: '" + file("train_caps.txt") + "' has 50 captions"), std::string::npos)
      << log.str();
  // A caption file that does not fit its own rows stops the run, though it also differs from the release.
  write_captions("train", 49);
  EXPECT_THROWS_WITH(check_for_training(f, log), file("train_caps.txt"), "49 captions for the 10 rows",
                     "1 problem(s)");
}

TEST_F(DataCheckTest, LabeledFolder) {
  synth::LabeledWorldConfig c;
  c.train_samples = 40, c.valid_samples = 10, c.test_samples = 10, c.classes = 4;
  const std::string dir = synth::write_labeled_world(synth::make_labeled_world(c), dir_.string());
  DataCheckOptions o;
  o.data_path = dir;
  DataCheckReport r = check_data(o);
  EXPECT_EQ(r.layout, "labeled");
  EXPECT_TRUE(r.ok()) << format_report(r);
  fs::resize_file(dir + "/train_texts.npy", fs::file_size(dir + "/train_texts.npy") - 40);
  r = check_data(o);
  EXPECT_TRUE(one_error(r, dir + "/train_texts.npy", "truncated"));
}

}  // namespace
}  // namespace rematch::data
