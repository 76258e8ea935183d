// `rematch train --method mrl | dscmr | sdml` from the command line: each preset's --dry_run resolves the official
// code's settings (docs/presets.md), the flags of the two methods and the common ones they cannot take are
// refused by name, and another method's ablation switch is refused for them.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "test_util.h"

namespace rematch::cli {
namespace {

using test::run_cli;
using test::operator+;

class LabeledBaselinesCliTest : public rematch::test::TempDirTest {
 protected:
  void SetUp() override {
    rematch::test::TempDirTest::SetUp();
    ASSERT_EQ(run_cli({"synth", "--kind", "labeled", "--out", path("d"), "--samples", "60", "--valid_samples", "20",
                       "--test_samples", "20", "--classes", "3"})
                  .code,
              kExitOk);
  }
  std::vector<std::string> train(const std::string& method) {
    return {"train", "--method", method, "--data_path", path("d") + "/synth_labeled", "--dry_run"};
  }
  nlohmann::json dry_run(const std::vector<std::string>& args) {
    const test::CliResult r = run_cli(args);
    EXPECT_EQ(r.code, kExitOk) << r.err;
    return r.code == kExitOk ? nlohmann::json::parse(r.out.substr(r.out.find('{'))) : nlohmann::json();
  }
  // The run is refused (usage error) with a message naming `flag`.
  void expect_refused(const std::vector<std::string>& args, const std::string& flag) {
    const test::CliResult r = run_cli(args);
    EXPECT_NE(r.code, kExitOk) << flag;
    EXPECT_NE(r.err.find(flag), std::string::npos) << "the error does not name " << flag << ": " << r.err;
  }
};

TEST_F(LabeledBaselinesCliTest, PresetsResolveTheOfficialSettings) {
  const nlohmann::json wiki = dry_run(train("mrl") + std::vector<std::string>{"--preset", "wiki"});
  EXPECT_EQ(wiki.at("num_epochs"), 30);  // MRL README command
  EXPECT_DOUBLE_EQ(wiki.at("beta").get<double>(), 0.7);
  EXPECT_DOUBLE_EQ(wiki.at("tau").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(wiki.at("learning_rate").get<double>(), 1e-4);
  EXPECT_EQ(wiki.at("batch_size"), 100);
  EXPECT_EQ(wiki.at("label_loss"), "mce");
  EXPECT_EQ(wiki.at("ls"), "cos");
  EXPECT_EQ(wiki.at("valid_len"), 231);
  const nlohmann::json nus = dry_run(train("mrl") + std::vector<std::string>{"--preset", "nus"});
  EXPECT_EQ(nus.at("num_epochs"), 100);  // utils/config.py
  EXPECT_DOUBLE_EQ(nus.at("beta").get<double>(), 0.5);
  const nlohmann::json d = dry_run(train("dscmr") + std::vector<std::string>{"--preset", "xmedianet"});
  EXPECT_EQ(d.at("num_epochs"), 500);  // DSCMR main.py
  EXPECT_EQ(d.at("dscmr_hidden_dim"), 2048);
  EXPECT_EQ(d.at("dscmr_common_dim"), 1024);
  EXPECT_DOUBLE_EQ(d.at("dscmr_alpha").get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(d.at("dscmr_beta").get<double>(), 0.1);
  EXPECT_EQ(d.at("valid_len"), 4000);
  const nlohmann::json s = dry_run(train("sdml") + std::vector<std::string>{"--preset", "wiki"});
  EXPECT_EQ(s.at("num_epochs"), 200);  // SDML main_SDML.py
  EXPECT_EQ(s.at("sdml_hidden_dim"), 1024);
  EXPECT_EQ(s.at("output_dim"), 512);
  EXPECT_DOUBLE_EQ(s.at("sdml_alpha").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(s.at("learning_rate").get<double>(), 1e-4);
  EXPECT_DOUBLE_EQ(s.at("sdml_text_lr").get<double>(), 2e-4);
}

TEST_F(LabeledBaselinesCliTest, BadFlagsAreRefusedByName) {
  using V = std::vector<std::string>;
  expect_refused(train("mrl") + V{"--lr_update", "5"}, "--lr_update");
  expect_refused(train("mrl") + V{"--warmup_epoch", "2"}, "--warmup_epoch");
  expect_refused(train("mrl") + V{"--label_loss", "mae"}, "--label_loss");
  expect_refused(train("mrl") + V{"--beta", "1.5"}, "--beta");
  expect_refused(train("mrl") + V{"--tau", "0"}, "--tau");
  expect_refused(train("mrl") + V{"--ls", "step"}, "--ls");
  expect_refused(train("mrl") + V{"--no_plc"}, "--no_plc");  // UOT-RCL's ablation switch
  expect_refused(train("mrl") + V{"--noise_mode", "image"}, "--noise_mode");
  expect_refused(train("dscmr") + V{"--dscmr_alpha", "-1"}, "--dscmr_alpha");
  expect_refused(train("dscmr") + V{"--dscmr_hidden_dim", "0"}, "--dscmr_hidden_dim");
  expect_refused(train("dscmr") + V{"--lr_update", "3"}, "--lr_update");
  expect_refused(train("dscmr") + V{"--confident_set", "random"}, "--confident_set");
  expect_refused(train("sdml") + V{"--sdml_alpha", "1.5"}, "--sdml_alpha");
  expect_refused(train("sdml") + V{"--sdml_text_lr", "0"}, "--sdml_text_lr");
  expect_refused(train("sdml") + V{"--lr_update", "2"}, "--lr_update");
  // --output_dim below the 3 classes: refused when the data is read (W = orthogonal(L×L)[:, :K]), before a run
  // folder is made.
  expect_refused({"train", "--method", "sdml", "--data_path", path("d") + "/synth_labeled", "--output_dim", "2",
                  "--batch_size", "10", "--num_epochs", "1", "--run_dir", path("run")},
                 "--output_dim");
  EXPECT_FALSE(std::filesystem::exists(path("run")));
}

}  // namespace
}  // namespace rematch::cli
