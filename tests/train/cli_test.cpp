// The `rematch` program through cli::run (what main() calls): help, usage errors with exit code 2, runtime
// failures with exit code 1, and the synth and eval subcommands end to end.
#include "train/cli/app.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"
#include "tensor/tensor.h"

namespace rematch::cli {
namespace {

using test::CliResult;
using test::operator+;
using test::run_cli;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rematch_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(CliTest, HelpListsTheSubcommands) {
  const CliResult r = run_cli({"--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("synth"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("eval"), std::string::npos) << r.out;
  const CliResult s = run_cli({"synth", "--help"});
  EXPECT_EQ(s.code, kExitOk);
  EXPECT_NE(s.out.find("--feature_noise"), std::string::npos) << s.out;
}

TEST_F(CliTest, UsageErrorsExitWithTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "subcommand"},
      {{"frobnicate"}, "frobnicate"},
      {{"synth", "--kind", "pairs", "--out", path("x"), "--bogus"}, "--bogus"},
      {{"synth", "--kind", "pictures", "--out", path("x")}, "--kind"},
      {{"synth", "--kind", "pairs"}, "--out"},
      {{"synth", "--kind", "pairs", "--out", path("x"), "--regions", "abc"}, "--regions"},
      {{"synth", "--kind", "pairs", "--out", path("x"), "--regions", "1"}, "--regions"},
      {{"synth", "--kind", "pairs", "--out", path("x"), "--concepts", "1000"}, "--concepts"},
      {{"synth", "--kind", "pairs", "--out", path("x"), "--feature_noise", "-1"}, "--feature_noise"},
      {{"synth", "--kind", "labeled", "--out", path("x"), "--regions", "4"}, "--regions does not apply"},
      {{"synth", "--kind", "pairs", "--out", path("x"), "--classes", "4"}, "--classes does not apply"},
      {{"eval", "--sims", path("missing.npy")}, "missing.npy"},
      {{"eval", "--sims"}, "--sims"},
  };
  for (const auto& [args, needle] : cases) {
    const CliResult r = run_cli(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.code, kExitUsage) << joined << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << joined << "\nerr: " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(path("x")));  // nothing written on a usage error
}

// A config stores "not given" as NaN or a negative integer (train/methods/options.h, Flag::unset): typed on the
// command line, such a value used to be replaced by the default without a word (`--learning_rate nan` trained at
// the default rate, `--num_epochs -1` for 100 epochs). Refused naming the flag; a negative value the flag gives a
// meaning to (uotrcl's --knn -1, --max_steps -1) still passes that check.
TEST_F(CliTest, TrainRefusesValuesThatWouldReadAsNotGiven) {
  const std::vector<std::string> base = {"train", "--method", "mrl", "--data_path", path("none"), "--run_dir", path("r")};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--learning_rate", "nan"}, "--learning_rate must be > 0 (got nan); leave the flag out for its default"},
      {{"--beta", "nan"}, "--beta must be"},
      {{"--num_epochs", "-1"}, "--num_epochs must be at least 1 (got -1); leave the flag out for its default"},
      {{"--batch_size", "-1"}, "--batch_size must be at least 2 (got -1)"},
      {{"--max_steps", "0"}, "--max_steps must be at least 1 or -1 (every step) (got 0)"},
  };
  for (const auto& [extra, needle] : cases) {
    const CliResult r = run_cli(base + extra);
    EXPECT_EQ(r.code, kExitUsage) << extra[0] << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << extra[0] << "\nerr: " << r.err;
  }
  for (const std::vector<std::string>& given : {std::vector<std::string>{"--method", "uotrcl", "--knn", "-1"},
                                                 std::vector<std::string>{"--max_steps", "-1"}}) {
    const CliResult r = run_cli(std::vector<std::string>{"train", "--data_path", path("none"), "--run_dir", path("r")} +
                                (given[0] == "--method" ? given : std::vector<std::string>{"--method", "mrl"} + given));
    EXPECT_EQ(r.err.find("leave the flag out"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;  // it got as far as the data
  }
  EXPECT_FALSE(std::filesystem::exists(path("r")));
}

// The files a run reads are recorded in config.json as absolute paths, so that --resume and `retrieve --run`
// started from another folder read the same data (a relative --data_path was resolved against the folder they
// started in: a resume there trained on whatever data set had that relative name, without a word).
// JSON has no infinity: config.json wrote `--margin inf` as null, which a resume read as "not given" and trained
// with the default margin. And CLI11 wrapped `--seed -1` to 2^64 - 1 and saturated numbers past the type: three
// different seeds, one run. Both refused, naming the flag.
TEST_F(CliTest, TrainRefusesInfinitiesAndSeedsOutsideTheirType) {
  const std::vector<std::string> base = {"train", "--data_path", path("none"), "--run_dir", path("r")};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--method", "bicro", "--margin", "inf"}, "--margin must be a finite number (got inf)"},
      {{"--method", "bicro", "--margin", "-inf"}, "--margin must be a finite number (got -inf)"},
      {{"--method", "cream", "--seed", "-1"}, "--seed: must be a whole number from 0 to 18446744073709551615, got '-1'"},
      {{"--method", "cream", "--seed", "18446744073709551616"}, "got '18446744073709551616'"},
      {{"--method", "cream", "--noise_seed", "9223372036854775808"},
       "--noise_seed: must be a whole number from -9223372036854775808 to 9223372036854775807"},
      {{"--method", "triplet", "--data_name", "synth_precomp", "--sgr_step", "1000000000"},
       "--sgr_step must be in [1, 64] (got 1000000000)"},
  };
  for (const auto& [extra, needle] : cases) {
    const CliResult r = run_cli(base + extra);
    EXPECT_EQ(r.code, kExitUsage) << extra.back() << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << extra.back() << "\nerr: " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(path("r")));
}

TEST_F(CliTest, ARunRecordsItsDataAsAnAbsolutePath) {
  struct InFolder {  // the process's working folder for the scope
    std::filesystem::path before = std::filesystem::current_path();
    explicit InFolder(const std::filesystem::path& p) { std::filesystem::current_path(p); }
    ~InFolder() { std::filesystem::current_path(before); }
  };
  ASSERT_EQ(run_cli({"synth", "--kind", "labeled", "--out", path("project"), "--samples", "40", "--valid_samples",
                     "12", "--test_samples", "16", "--classes", "4", "--img_dim", "8", "--txt_dim", "6"})
                .code,
            kExitOk);
  {
    InFolder in(dir_ / "project");
    const CliResult r = run_cli({"train", "--method", "mrl", "--data_path", "./synth_labeled", "--num_epochs", "1",
                                 "--batch_size", "8", "--hidden_dim", "16", "--output_dim", "8", "--progress", "none",
                                 "--no_plots", "--run_dir", path("run")});
    ASSERT_EQ(r.code, kExitOk) << r.err;
  }
  std::ifstream config(path("run/config.json"));
  const nlohmann::json j = nlohmann::json::parse(config);
  EXPECT_EQ(j["data_path"], path("project/synth_labeled"));
  std::filesystem::create_directories(path("elsewhere"));
  InFolder in(dir_ / "elsewhere");
  const CliResult r = run_cli({"retrieve", "--run", path("run"), "--out", path("report")});
  EXPECT_EQ(r.code, kExitOk) << r.err;
}

TEST_F(CliTest, SynthPairsWritesTheBenchmark) {
  const CliResult r = run_cli({"synth", "--kind", "pairs", "--out", path("out"), "--images", "12", "--dev_images", "3",
                            "--test_images", "4", "--regions", "6", "--feature_dim", "8", "--seed", "3"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("train: 12 images [12, 6, 8], 60 captions"), std::string::npos) << r.out;
  EXPECT_EQ(load_npy(path("out/synth_precomp/test_ims.npy")).sizes(), (Shape{4, 6, 8}));
  std::ifstream caps(path("out/synth_precomp/dev_caps.txt"));
  int lines = 0;
  for (std::string line; std::getline(caps, line);) ++lines;
  EXPECT_EQ(lines, 15);
  EXPECT_TRUE(std::filesystem::exists(path("out/vocab/synth_precomp_vocab.json")));
}

TEST_F(CliTest, SynthLabeledWritesTheBenchmark) {
  const CliResult r = run_cli({"synth", "--kind", "labeled", "--out", path("out"), "--data_name", "toy", "--classes",
                            "4", "--samples", "40", "--valid_samples", "8", "--test_samples", "12", "--img_dim",
                            "10", "--txt_dim", "6", "--feature_noise", "0.1"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(load_npy(path("out/toy/train_imgs.npy")).sizes(), (Shape{40, 10}));
  EXPECT_EQ(load_npy(path("out/toy/test_texts.npy")).sizes(), (Shape{12, 6}));
  EXPECT_EQ(load_npy(path("out/toy/valid_labels.npy")).sizes(), (Shape{8}));
}

TEST_F(CliTest, EvalPrintsTableAndJson) {
  // The 3 x 3 matrix of retrieval_metrics_test (hand-computed there): i2t 33.33/100/100 medr 2 meanr 1.67,
  // t2i 66.67/100/100 medr 1 meanr 1.33, rSum 500.
  save_npy(path("s.npy"), from_vector(std::vector<float>{0.9f, 0.1f, 0.5f, 0.8f, 0.7f, 0.2f, 0.3f, 0.6f, 0.4f}, {3, 3}));
  const CliResult table = run_cli({"eval", "--sims", path("s.npy"), "--captions_per_image", "1"});
  ASSERT_EQ(table.code, kExitOk) << table.err;
  EXPECT_NE(table.out.find(" 33.33  100.00  100.00     2.0     1.67"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" 66.67  100.00  100.00     1.0     1.33"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("rSum 500.00"), std::string::npos) << table.out;
  const CliResult js = run_cli({"eval", "--sims", path("s.npy"), "--captions_per_image", "1", "--json"});
  ASSERT_EQ(js.code, kExitOk) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j.size(), 11u);
  EXPECT_NEAR(j["t2i_r1"].get<double>(), 200.0 / 3, 1e-9);
  EXPECT_NEAR(j["rsum"].get<double>(), 500, 1e-9);
  EXPECT_NEAR(j["i2t_medr"].get<double>(), 2, 1e-12);
}

TEST_F(CliTest, EvalFoldsAndBadMatrices) {
  // The 2-fold matrix of retrieval_metrics_test: averaged R@1 i2t 50, t2i 75, rSum 525.
  save_npy(path("f.npy"), from_vector(std::vector<double>{0.2, 0.9, 5, 5, 0.1, 0.3, 5, 5, 5, 5, 0.9, 0.05, 5, 5, 0.3, 0.1},
                                      {4, 4}));
  const CliResult r = run_cli({"eval", "--sims", path("f.npy"), "--captions_per_image", "1", "--folds", "2", "--json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["i2t_r1"].get<double>(), 50, 1e-9);
  EXPECT_NEAR(j["t2i_r1"].get<double>(), 75, 1e-9);
  EXPECT_NEAR(j["rsum"].get<double>(), 525, 1e-9);
  // 4 x 4 is not [N, 5N] and 4 images do not make 3 folds: command-line mistakes.
  EXPECT_EQ(run_cli({"eval", "--sims", path("f.npy")}).code, kExitUsage);
  EXPECT_EQ(run_cli({"eval", "--sims", path("f.npy"), "--captions_per_image", "1", "--folds", "3"}).code, kExitUsage);
  // 4 * (2^62 + 1) wraps around to the 4 columns: a usage error naming the flag (it read out of bounds).
  const CliResult wrapped = run_cli({"eval", "--sims", path("f.npy"), "--captions_per_image", "4611686018427387905"});
  EXPECT_EQ(wrapped.code, kExitUsage);
  EXPECT_NE(wrapped.err.find("which is not [N_img, N_img * 4611686018427387905] for --captions_per_image"),
            std::string::npos)
      << wrapped.err;
  // A file that is not an .npy: a runtime failure naming the file, exit code 1.
  std::ofstream(path("junk.npy")) << "not numpy";
  const CliResult junk = run_cli({"eval", "--sims", path("junk.npy")});
  EXPECT_EQ(junk.code, kExitFailure);
  EXPECT_NE(junk.err.find("junk.npy"), std::string::npos) << junk.err;
}

}  // namespace
}  // namespace rematch::cli
