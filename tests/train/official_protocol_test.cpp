// The official protocols of the presets: COCO's final test on testall reported as
// the mean of five 1K folds and the full 5K, each method's model selection on its official code's dev subset,
// and `rematch train --dry_run`, which resolves all of it, checks the data files and trains nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "test_util.h"
#include "train/methods/rcsl/rcsl_options.h"
#include "train/methods/train_config.h"

namespace rematch::cli {
namespace {

using test::CliResult;
using test::operator+;
using test::run_cli;
using train::TrainConfig;

TrainConfig resolved(const std::string& method, const std::string& preset) {
  TrainConfig c;
  c.method = method;
  c.preset = preset;
  c.data_path = "/data";
  if (method == "rcsl") c.options<train::RcslOptions>().paired_length = 500;
  train::resolve_defaults(c);
  return c;
}

TEST(OfficialProtocol, CocoPresetTestsOnTestallWithFiveFoldsForEveryPrecompMethod) {
  for (const char* method : {"triplet", "infonce", "rcl", "l2rm", "rcsl", "rcsl-nc"}) {
    const TrainConfig coco = resolved(method, "coco");
    EXPECT_EQ(coco.test_split, train::TestSplit::Testall) << method;
    EXPECT_TRUE(coco.coco_folds) << method;
    for (const char* other : {"f30k", "cc152k"}) {
      const TrainConfig c = resolved(method, other);
      EXPECT_EQ(c.test_split, train::TestSplit::Test) << method << " " << other;
      EXPECT_FALSE(c.coco_folds) << method << " " << other;
    }
  }
  // An explicit split wins over the preset.
  TrainConfig c;
  c.method = "l2rm";
  c.preset = "coco";
  c.data_path = "/data";
  c.test_split = train::TestSplit::Test;
  train::resolve_defaults(c);
  EXPECT_EQ(c.test_split, train::TestSplit::Test);
  EXPECT_FALSE(c.coco_folds);
  EXPECT_THROWS_WITH(train::train_config_from_json(R"({"method": "l2rm", "test_split": "dev"})"), "--test_split",
                     "testall", "dev");
}

TEST(OfficialProtocol, EachMethodSelectsItsModelOnItsOfficialDevSubset) {
  // L2RM's data.py keeps 1000·im_div dev captions (NCR's rule); RCL, SGRAF and RCSL keep 5,000.
  for (const char* preset : {"f30k", "coco", "cc152k"}) {
    EXPECT_EQ(resolved("l2rm", preset).val_subset, data::ValSubset::ncr) << preset;
    for (const char* method : {"triplet", "infonce", "rcl", "rcsl", "rcsl-nc"})
      EXPECT_EQ(resolved(method, preset).val_subset, data::ValSubset::sgraf) << method << " " << preset;
  }
  TrainConfig c;
  c.method = "l2rm";
  c.preset = "f30k";
  c.data_path = "/data";
  c.val_subset = data::ValSubset::sgraf;  // --val_subset still overrides
  train::resolve_defaults(c);
  EXPECT_EQ(c.val_subset, data::ValSubset::sgraf);
}

class DryRunTest : public rematch::test::TempDirTest {
 protected:
  // A tiny synthetic COCO: 10 test images (five folds of two), copied to testall as COCO ships it.
  void SetUp() override {
    rematch::test::TempDirTest::SetUp();
    ASSERT_EQ(run_cli({"synth", "--kind", "pairs", "--out", path("data"), "--data_name", "coco_precomp", "--images",
                       "24", "--dev_images", "5", "--test_images", "10", "--regions", "4", "--feature_dim", "8",
                       "--seed", "4"})
                  .code,
              kExitOk);
    const std::string d = path("data") + "/coco_precomp/";
    std::filesystem::copy_file(d + "test_ims.npy", d + "testall_ims.npy");
    std::filesystem::copy_file(d + "test_caps.txt", d + "testall_caps.txt");
  }
  std::vector<std::string> coco(const std::string& method, const std::string& run) const {
    return {"train", "--method", method, "--preset", "coco", "--data_path", path("data"), "--run_dir", path(run)};
  }
  // Flags that make a preset run tiny.
  static std::vector<std::string> tiny() {
    return {"--batch_size", "8", "--embed_size", "16", "--word_dim", "8", "--sim_dim", "8", "--num_epochs", "1",
            "--warmup_epoch", "0", "--progress", "none"};
  }
};

TEST_F(DryRunTest, PrintsTheResolvedConfigurationAndTrainsNothing) {
  const CliResult r = run_cli(coco("l2rm", "run") + std::vector<std::string>{"--dry_run"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  // The keys of config.json, resolved from the preset.
  EXPECT_EQ(j, nlohmann::json::parse(train::to_json(train::train_config_from_json(r.out))));
  EXPECT_EQ(j.at("data_name"), "coco_precomp");
  EXPECT_EQ(j.at("num_epochs"), 20);
  EXPECT_EQ(j.at("warmup_epoch"), 10);
  EXPECT_DOUBLE_EQ(j.at("reg").get<double>(), 0.07);
  EXPECT_EQ(j.at("test_split"), "testall");
  EXPECT_EQ(j.at("coco_folds"), true);
  EXPECT_EQ(j.at("val_subset"), "ncr");
  // Every file a run reads was checked, and nothing was written.
  for (const char* f : {"train_ims.npy", "dev_caps.txt", "testall_ims.npy", "testall_caps.txt", "coco_precomp_vocab"})
    EXPECT_NE(r.err.find(f), std::string::npos) << f << "\n" << r.err;
  EXPECT_NE(r.err.find("nothing was trained"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("run")));
  // The device is checked by name only: a GPU command can be checked on a CPU machine.
  EXPECT_EQ(run_cli(coco("l2rm", "run") + std::vector<std::string>{"--dry_run", "--device", "cuda"}).code, kExitOk);
  const CliResult bad_device = run_cli(coco("l2rm", "run") + std::vector<std::string>{"--dry_run", "--device", "tpu"});
  EXPECT_EQ(bad_device.code, kExitUsage);
  EXPECT_NE(bad_device.err.find("--device"), std::string::npos) << bad_device.err;
}

TEST_F(DryRunTest, MissingOrUnreadableDataIsNamed) {
  const std::string d = path("data") + "/coco_precomp/";
  std::filesystem::remove(d + "testall_caps.txt");
  CliResult r = run_cli(coco("rcl", "run") + std::vector<std::string>{"--dry_run"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("testall captions"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(d + "testall_caps.txt"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  std::filesystem::copy_file(d + "test_caps.txt", d + "testall_caps.txt");
  // Not an .npy file, an empty file, a missing --noise_file and --word_vectors: each named with its flag.
  std::ofstream(d + "dev_ims.npy") << "not numpy";
  r = run_cli(coco("rcl", "run") + std::vector<std::string>{"--dry_run"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("dev image features"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\\x93NUMPY"), std::string::npos) << r.err;
  std::filesystem::copy_file(d + "test_ims.npy", d + "dev_ims.npy", std::filesystem::copy_options::overwrite_existing);
  std::ofstream(path("empty.npy")).close();
  r = run_cli(coco("l2rm", "run") + std::vector<std::string>{"--dry_run", "--noise_file", path("empty.npy")});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("--noise_file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is empty"), std::string::npos) << r.err;
  r = run_cli(coco("rcsl", "run") +
              std::vector<std::string>{"--dry_run", "--paired_length", "5", "--word_vectors", path("glove.txt")});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("--word_vectors"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  // A method's own checks run too (RCSL needs --paired_length), before any file is read.
  r = run_cli(coco("rcsl", "run") + std::vector<std::string>{"--dry_run"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--paired_length"), std::string::npos) << r.err;
}

TEST_F(DryRunTest, DryRunOfAResumeShowsTheSavedConfiguration) {
  ASSERT_EQ(run_cli(coco("triplet", "run") + tiny()).code, kExitOk);
  const CliResult r = run_cli({"train", "--resume", path("run"), "--dry_run"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::ifstream saved(path("run") + "/config.json");
  nlohmann::json expected = nlohmann::json::parse(saved);
  expected["progress"] = "auto";  // the one flag a resumed run takes from its command line (--progress)
  EXPECT_EQ(nlohmann::json::parse(r.out), expected);
  // A folder without a run is named, and the dry run leaves no folder behind.
  const CliResult none = run_cli({"train", "--resume", path("no_run"), "--dry_run"});
  EXPECT_EQ(none.code, kExitFailure);
  EXPECT_NE(none.err.find("holds no run to resume"), std::string::npos) << none.err;
  EXPECT_FALSE(std::filesystem::exists(path("no_run")));
}

TEST_F(DryRunTest, CocoPresetRunReportsTheFiveFoldMeanAndTheFull5kInItsLastLines) {
  const CliResult r = run_cli(coco("triplet", "run") + tiny());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("testall 5-fold 1K (mean over folds)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("testall full"), std::string::npos) << r.out;
  // The line before "results:" gives both rSums.
  const size_t line = r.out.find("test rSum: ");
  ASSERT_NE(line, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(5-fold 1K mean), ", line), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(full split)\nresults: ", line), std::string::npos) << r.out;
  std::ifstream results(path("run") + "/results.md");
  const std::string md((std::istreambuf_iterator<char>(results)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("testall 5-fold 1K"), std::string::npos) << md;
  EXPECT_NE(md.find("testall full"), std::string::npos) << md;
}

}  // namespace
}  // namespace rematch::cli
