// JSON files nested deeper than any file rematch writes (tensor/json_depth.h): a label-noise file, a run's
// config.json, an epoch split's .json and a vocabulary are refused with the file named (--karpathy_json,
// checkpoint metadata and metrics lines go through the same check). Before, nlohmann parsed them and the "wrong type" messages quoting a part of the value recursed once per level: a
// 200 kB file of brackets overflowed the stack (exit 139) in `data check`, `train --resume` and `retrieve --run`.
#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "test_util.h"
#include "train/data/vocab.h"
#include "viz/epoch_splits.h"

namespace rematch::cli {
namespace {

namespace fs = std::filesystem;
using test::CliResult;
using test::run_cli;

const std::string kDeep = std::string(100000, '[') + std::string(100000, ']');

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class DeepJsonTest : public rematch::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const CliResult r = run_cli({"synth", "--kind", "labeled", "--out", path("base"), "--samples", "40",
                                 "--valid_samples", "12", "--test_samples", "16", "--classes", "4", "--img_dim", "8",
                                 "--txt_dim", "6"});
    ASSERT_EQ(r.code, kExitOk) << r.err;
    data_ = path("base/synth_labeled");
  }
  // Refused (exit non-zero, no crash) with a message naming the file and the depth (`data check` lists its
  // problems on stdout).
  void expect_refused(const CliResult& r, const std::string& file) {
    EXPECT_NE(r.code, kExitOk);
    const std::string said = r.out + r.err;
    EXPECT_TRUE(contains(said, file)) << said;
    EXPECT_TRUE(contains(said, "JSON nested more than 64 levels deep")) << said;
  }
  std::string data_;
};

TEST_F(DeepJsonTest, ALabelNoiseFileIsRefusedByTheCheckAndByTraining) {
  const std::string noise = path("deep.json");
  put(noise, kDeep);
  expect_refused(run_cli({"data", "check", "--data_path", data_, "--noise_file", noise}), noise);
  expect_refused(run_cli({"train", "--method", "mrl", "--data_path", data_, "--num_epochs", "1", "--batch_size", "8",
                          "--hidden_dim", "16", "--output_dim", "8", "--run_dir", path("r1"), "--noise_file", noise}),
                 noise);
  // Found beside the data, with no flag.
  const std::string beside = data_ + "/noise_labels_0.2_sym.json";
  put(beside, kDeep);
  expect_refused(run_cli({"data", "check", "--data_path", data_}), beside);
}

TEST_F(DeepJsonTest, ARunConfigIsRefusedByResumeAndByTheRunPage) {
  const fs::path run = dir_ / "run";
  fs::create_directories(run);
  const std::string config = (run / "config.json").string();
  put(config, "{\"method\": " + kDeep + ", \"data_path\": \"" + data_ + "\"}");
  expect_refused(run_cli({"train", "--resume", run.string()}), config);
  expect_refused(run_cli({"retrieve", "--run", run.string()}), config);
}

TEST_F(DeepJsonTest, AnEpochSplitAndAVocabularyAreRefused) {
  const std::string vocab = path("vocab.json");
  put(vocab, "{\"word2idx\": " + kDeep + "}");
  EXPECT_THROWS_WITH(data::Vocabulary::load(vocab), "'" + vocab + "': JSON nested more than 64 levels deep");
  const fs::path run = dir_ / "splits_run";
  fs::create_directories(run / "splits");
  put(run / "splits" / "epoch_1.json", kDeep);
  EXPECT_THROWS_WITH(viz::read_epoch_splits(run.string()), "JSON nested more than 64 levels deep");
}

}  // namespace
}  // namespace rematch::cli
