// `rematch synth --kind labeled` refuses the flags that made it write data its own `data check` rejects (more
// classes than training samples, a class spread that overflows float32), naming them, and writes nothing; at the
// bound (as many samples as classes) the data it writes passes the check.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_runner.h"
#include "test_util.h"

namespace rematch::cli {
namespace {

using test::run_cli;

class LabeledSynthCliTest : public rematch::test::TempDirTest {};

TEST_F(LabeledSynthCliTest, FlagsThatMakeDataTheCheckRejectsAreRefusedByName) {
  struct Case {
    std::vector<std::string> flags;
    std::string said;
  };
  const std::vector<Case> cases = {
      {{"--classes", "50", "--samples", "10"}, "--classes 50 exceeds --samples 10"},
      {{"--classes", "10", "--samples", "1", "--valid_samples", "1", "--test_samples", "1"},
       "--classes 10 exceeds --samples 1"},
      {{"--class_spread", "1e308"}, "--class_spread must lie in [0, 1e+06], got 1e+308"},
      {{"--feature_noise", "1e308"}, "--feature_noise must lie in [0, 1e+06], got 1e+308"},
  };
  for (const Case& c : cases) {
    const std::string out = path("s" + std::to_string(&c - cases.data()));
    std::vector<std::string> args = {"synth", "--kind", "labeled", "--out", out};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const test::CliResult r = run_cli(args);
    EXPECT_EQ(r.code, kExitUsage) << c.said << "\n" << r.err;
    EXPECT_NE(r.err.find(c.said), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out + "/synth_labeled/train_labels.npy")) << c.said;
  }
}

TEST_F(LabeledSynthCliTest, AsManySamplesAsClassesWritesDataTheCheckPasses) {
  ASSERT_EQ(run_cli({"synth", "--kind", "labeled", "--out", path("s"), "--classes", "10", "--samples", "10",
                     "--valid_samples", "3", "--test_samples", "3", "--img_dim", "4", "--txt_dim", "3"})
                .code,
            kExitOk);
  const test::CliResult r = run_cli({"data", "check", "--data_path", path("s") + "/synth_labeled"});
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("10 classes"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rematch::cli
