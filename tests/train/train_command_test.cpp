// `rematch train` end to end on a tiny synthetic benchmark: the run folder it writes, the errors that stop it
// before any work, and SIGINT: the run saves a checkpoint, exits with 130, and `--resume` finishes it with
// exactly the metrics of an uninterrupted run.
#include "train/cli/train_command.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tensor/npy.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/run/run_folder.h"

namespace rematch::cli {
namespace {

struct Result {
  int code;
  std::string out, err;
};

Result run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "rematch");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The metric lines of a run folder as text: equal text = equal numbers.
std::vector<std::string> metric_lines(const std::string& run_dir) {
  std::ifstream f(run_dir + "/metrics.jsonl");
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);) lines.push_back(line);
  return lines;
}

class TrainCommandTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    test::TempDirTest::SetUp();
    ASSERT_EQ(run_cli({"synth", "--kind", "pairs", "--out", path("synth"), "--images", "40", "--dev_images", "8",
                       "--test_images", "8", "--regions", "4", "--feature_dim", "8", "--seed", "3"})
                  .code,
              kExitOk);
  }
  // A tiny model on the synthetic data; `run` names the run folder.
  std::vector<std::string> train(const std::string& method, const std::string& run,
                                 const std::string& epochs = "2") const {
    return {"train",       "--method",    method,     "--data_path", path("synth"), "--data_name",
            "synth_precomp", "--run_dir", path(run),  "--batch_size", "8",        "--embed_size",
            "16",          "--word_dim",  "8",        "--sim_dim",   "8",          "--num_epochs",
            epochs,        "--progress",  "none",     "--noise_ratio", "0.4",      "--log_step", "1"};
  }
};

TEST_F(TrainCommandTest, TripletRunWritesTheRunFolder) {
  const Result r = run_cli(train("triplet", "run"));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("rSum"), std::string::npos) << r.out;
  for (const char* f : {"config.json", "metrics.jsonl", "checkpoint_latest.safetensors", "checkpoint_best.safetensors",
                        "results.md", "noise_index.npy", "plots/loss.png", "plots/validation.png"})
    EXPECT_TRUE(std::filesystem::exists(path("run") + "/" + f)) << f;
  std::ifstream config(path("run") + "/config.json");
  const nlohmann::json j = nlohmann::json::parse(config);
  EXPECT_EQ(j.at("method"), "triplet");
  EXPECT_EQ(j.at("batch_size"), 8);
  EXPECT_EQ(j.at("lr_update"), 30);  // resolved from the method's defaults
}

TEST_F(TrainCommandTest, L2rmRunWritesItsPlots) {
  const Result r = run_cli(train("l2rm", "run", "1") + std::vector<std::string>{"--warmup_epoch", "1"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(std::filesystem::exists(path("run") + "/plots/loss_histogram.png"));
  EXPECT_TRUE(std::filesystem::exists(path("run") + "/plots/transport_plan.png"));
  // The main epoch's split is logged with its quality (results.md describes the best state, which may be
  // the warm-up's).
  const std::vector<std::string> lines = metric_lines(path("run"));
  bool split_logged = false;
  for (const std::string& line : lines)
    split_logged |= line.find("\"kind\":\"epoch_start\"") != std::string::npos &&
                    line.find("\"clean_precision\"") != std::string::npos;
  EXPECT_TRUE(split_logged);
  EXPECT_TRUE(std::filesystem::exists(path("run") + "/results.md"));
}

TEST_F(TrainCommandTest, BadInputFailsBeforeAnyWork) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> usage = {
      {{"train", "--method", "frobnicate", "--data_path", "x", "--data_name", "y"}, {"--method", "frobnicate"}},
      {{"train", "--method", "rcl", "--bogus", "1"}, {"--bogus"}},
      {{"train", "--method", "rcsl", "--data_path", "x", "--data_name", "y"}, {"--paired_length"}},
      {{"train", "--method", "rcl", "--data_path", "x", "--data_name", "y", "--loss", "hinge"}, {"--loss", "hinge"}},
      {{"train", "--method", "l2rm"}, {"--data_path"}},
  };
  for (const auto& [args, parts] : usage) {
    const Result r = run_cli(args);
    EXPECT_EQ(r.code, kExitUsage) << r.err;
    for (const std::string& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
  }
  const Result missing = run_cli({"train", "--method", "triplet", "--data_path", path("nowhere"), "--data_name",
                                  "synth_precomp", "--run_dir", path("run")});
  EXPECT_EQ(missing.code, kExitFailure);
  EXPECT_NE(missing.err.find(path("nowhere")), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(path("run")));  // no run folder for a run that never started
  ASSERT_EQ(run_cli(train("triplet", "run")).code, kExitOk);
  const Result again = run_cli(train("triplet", "run"));
  EXPECT_EQ(again.code, kExitFailure);
  EXPECT_NE(again.err.find("--resume"), std::string::npos) << again.err;
  const Result mixed = run_cli({"train", "--resume", path("run"), "--batch_size", "4"});
  EXPECT_EQ(mixed.code, kExitUsage);
  EXPECT_NE(mixed.err.find("--batch_size"), std::string::npos) << mixed.err;
}

TEST_F(TrainCommandTest, SigintThenResumeGivesTheUninterruptedMetrics) {
  const std::vector<std::string> more = {"--warmup_epoch", "1"};
  ASSERT_EQ(run_cli(train("l2rm", "whole") + more).code, kExitOk);

  // Interrupt the second run once it has logged a few training steps of its main phase. A signal that comes
  // too late (the run over) must not kill the test binary: ignored outside the run's own handler.
  const auto previous = std::signal(SIGINT, SIG_IGN);
  std::atomic<bool> done{false};
  std::thread killer([&] {
    while (!done) {
      int main_steps = 0;
      bool main_started = false;
      for (const std::string& line : metric_lines(path("cut"))) {
        main_started |= line.find("\"kind\":\"epoch_start\"") != std::string::npos &&
                        line.find("\"epoch\":1") != std::string::npos;
        main_steps += main_started && line.find("\"kind\":\"train\"") != std::string::npos;
      }
      if (main_steps >= 2) {
        std::raise(SIGINT);
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  const Result cut = run_cli(train("l2rm", "cut") + more);
  done = true;
  killer.join();
  std::signal(SIGINT, previous);
  ASSERT_EQ(cut.code, kExitInterrupted) << cut.err;
  EXPECT_NE(cut.err.find("--resume"), std::string::npos) << cut.err;
  const Result resumed = run_cli({"train", "--resume", path("cut"), "--progress", "none"});
  ASSERT_EQ(resumed.code, kExitOk) << resumed.err;
  EXPECT_EQ(metric_lines(path("cut")), metric_lines(path("whole")));
}

TEST_F(TrainCommandTest, SgrAndSafRunsEvaluateAsSgraf) {
  ASSERT_EQ(run_cli(train("triplet", "sgr", "1")).code, kExitOk);
  ASSERT_EQ(run_cli(train("triplet", "saf", "1") + std::vector<std::string>{"--module_name", "SAF"}).code, kExitOk);
  const Result r = run_cli({"eval", "--checkpoint", path("sgr") + "/checkpoint_best.safetensors", "--checkpoint",
                            path("saf") + "/checkpoint_best.safetensors", "--data_path", path("synth"), "--data_name",
                            "synth_precomp", "--split", "test"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("SGRAF (SGR+SAF averaged)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rSum"), std::string::npos) << r.out;
}

TEST_F(TrainCommandTest, NanInTheDataStopsAtTheStepAndNamesTheOp) {
  // One training image with a NaN feature: the first step that sees it has a NaN loss.
  const std::string ims = path("synth") + "/synth_precomp/train_ims.npy";
  Tensor features = load_npy(ims);
  features.data<float>()[3 * features.size(1) * features.size(2)] = std::numeric_limits<float>::quiet_NaN();
  save_npy(ims, features);
  const Result r = run_cli(train("triplet", "run"));
  EXPECT_EQ(r.code, kExitFailure);
  for (const char* part : {"triplet", "step", "anomaly mode", "no checkpoint"})
    EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("run") + "/checkpoint_latest.safetensors"));
}

}  // namespace
}  // namespace rematch::cli
