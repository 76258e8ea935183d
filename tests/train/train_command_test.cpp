// `rematch train` end to end on a tiny synthetic benchmark: the run folder it writes, the errors that stop it
// before any work, and SIGINT: the run saves a checkpoint, exits with 130, and `--resume` finishes it with
// exactly the metrics of an uninterrupted run.
#include "train/cli/train_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_runner.h"
#include "tensor/device.h"
#include "tensor/file_io.h"
#include "tensor/npy.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/run/run_folder.h"
#include "train/run/training_state.h"
#include "viz/epoch_splits.h"

namespace rematch::cli {
namespace {

using test::CliResult;
using test::operator+;
using test::metric_lines;
using test::run_cli;

// `args` with the value of `flag` replaced.
std::vector<std::string> with_flag(std::vector<std::string> args, const std::string& flag, const std::string& value) {
  const auto it = std::find(args.begin(), args.end(), flag);
  EXPECT_TRUE(it != args.end() && it + 1 != args.end()) << flag;
  if (it != args.end() && it + 1 != args.end()) *(it + 1) = value;
  return args;
}

class TrainCommandTest : public rematch::test::TempDirTest {
 protected:
  void SetUp() override {
    rematch::test::TempDirTest::SetUp();
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
  const CliResult r = run_cli(train("triplet", "run"));
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
  const CliResult r = run_cli(train("l2rm", "run", "1") + std::vector<std::string>{"--warmup_epoch", "1"});
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
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.code, kExitUsage) << r.err;
    for (const std::string& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
  }
  const CliResult missing = run_cli({"train", "--method", "triplet", "--data_path", path("nowhere"), "--data_name",
                                     "synth_precomp", "--run_dir", path("run")});
  EXPECT_EQ(missing.code, kExitFailure);
  EXPECT_NE(missing.err.find(path("nowhere")), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(path("run")));  // no run folder for a run that never started
  ASSERT_EQ(run_cli(train("triplet", "run")).code, kExitOk);
  const CliResult again = run_cli(train("triplet", "run"));
  EXPECT_EQ(again.code, kExitFailure);
  EXPECT_NE(again.err.find("--resume"), std::string::npos) << again.err;
  const CliResult mixed = run_cli({"train", "--resume", path("run"), "--batch_size", "4"});
  EXPECT_EQ(mixed.code, kExitUsage);
  EXPECT_NE(mixed.err.find("--batch_size"), std::string::npos) << mixed.err;
}

TEST_F(TrainCommandTest, AnUnusableDeviceIsRefusedBeforeAnyWork) {
  // Not a device at all, or (on a machine without a GPU, or a build without CUDA) a CUDA device: the train
  // command and the demo stop before reading or making any data, naming the flag.
  std::vector<std::string> devices = {"gpu", "cuda:x", "cuda:99"};
  if (!cuda_available()) devices.push_back("cuda");
  for (const std::string& device : devices) {
    const int code = device == "cuda:99" || device == "cuda" ? kExitFailure : kExitUsage;  // no such GPU, or a typo
    const CliResult r = run_cli(train("triplet", "run") + std::vector<std::string>{"--device", device});
    EXPECT_EQ(r.code, code) << device;
    EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("data:"), std::string::npos) << "data was read: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("run")));
    const CliResult demo = run_cli({"demo", "--out", path("demo"), "--device", device, "--progress", "none"});
    EXPECT_EQ(demo.code, code) << device;
    EXPECT_NE(demo.err.find("--device"), std::string::npos) << demo.err;
    EXPECT_FALSE(std::filesystem::exists(path("demo") + "/data"));
  }
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
  const CliResult cut = run_cli(train("l2rm", "cut") + more);
  done = true;
  killer.join();
  std::signal(SIGINT, previous);
  ASSERT_EQ(cut.code, kExitInterrupted) << cut.err;
  EXPECT_NE(cut.err.find("--resume"), std::string::npos) << cut.err;
  const CliResult resumed = run_cli({"train", "--resume", path("cut"), "--progress", "none"});
  ASSERT_EQ(resumed.code, kExitOk) << resumed.err;
  EXPECT_EQ(metric_lines(path("cut")), metric_lines(path("whole")));
}

// `--resume` reads each checkpoint once: checkpoint_latest, the state it continues from, and checkpoint_best, the
// state the final test evaluates, which the resume check has read already (train/methods/resume_check.h). Here a
// finished run, resumed at its end: the test of its best state again.
TEST_F(TrainCommandTest, ResumeReadsEachCheckpointOnce) {
  ASSERT_EQ(run_cli(train("triplet", "run")).code, kExitOk);
  std::map<std::string, int> opens;
  io::set_open_observer([&opens](const std::string& p) { ++opens[std::filesystem::path(p).filename().string()]; });
  struct Unset {
    ~Unset() { io::set_open_observer({}); }
  } unset;
  const CliResult r = run_cli({"train", "--resume", path("run"), "--progress", "none"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("rSum"), std::string::npos) << r.out;
  EXPECT_EQ(opens["checkpoint_latest.safetensors"], 1);
  EXPECT_EQ(opens["checkpoint_best.safetensors"], 1);
}

// Reproducibility (README, "Reproducibility"): the same seed on the same machine, build and thread count gives
// the same run to the bit — every metric and the checkpoint's bytes — and another seed another run.
TEST_F(TrainCommandTest, TheSameSeedGivesTheSameRunToTheBit) {
  auto file = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  const std::vector<std::string> l2rm = {"--warmup_epoch", "1", "--seed", "5"};
  ASSERT_EQ(run_cli(train("l2rm", "first") + l2rm).code, kExitOk);
  ASSERT_EQ(run_cli(train("l2rm", "second") + l2rm).code, kExitOk);
  ASSERT_EQ(run_cli(with_flag(train("l2rm", "other") + l2rm, "--seed", "6")).code, kExitOk);
  EXPECT_GT(metric_lines(path("first")).size(), 10u);
  EXPECT_EQ(metric_lines(path("first")), metric_lines(path("second")));
  const std::string checkpoint = file(path("first") + "/checkpoint_latest.safetensors");
  EXPECT_GT(checkpoint.size(), 1000u);
  EXPECT_TRUE(checkpoint == file(path("second") + "/checkpoint_latest.safetensors"));
  EXPECT_NE(metric_lines(path("first")), metric_lines(path("other")));
}

TEST_F(TrainCommandTest, SgrAndSafRunsEvaluateAsSgraf) {
  ASSERT_EQ(run_cli(train("triplet", "sgr", "1")).code, kExitOk);
  ASSERT_EQ(run_cli(train("triplet", "saf", "1") + std::vector<std::string>{"--module_name", "SAF"}).code, kExitOk);
  const CliResult r = run_cli({"eval", "--checkpoint", path("sgr") + "/checkpoint_best.safetensors", "--checkpoint",
                            path("saf") + "/checkpoint_best.safetensors", "--data_path", path("synth"), "--data_name",
                            "synth_precomp", "--split", "test"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("SGRAF (SGR+SAF averaged)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rSum"), std::string::npos) << r.out;
}

TEST_F(TrainCommandTest, InfonceRunLearns) {
  const CliResult r = run_cli(with_flag(train("infonce", "run", "4"), "--noise_ratio", "0") +
                              std::vector<std::string>{"--module_name", "SAF", "--learning_rate", "1e-2"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::ifstream config(path("run") + "/config.json");
  EXPECT_EQ(nlohmann::json::parse(config).at("method"), "infonce");
  // Mean training loss per epoch: InfoNCE on 8-pair batches starts near 2·log 8 = 4.16 (scores all alike) and
  // falls as the model fits the pairs (4.18 → 3.53 measured).
  std::map<int64_t, std::pair<double, int>> epoch_loss;
  bool tested = false;
  for (const run::MetricRecord& m : run::read_metrics(path("run") + "/metrics.jsonl")) {
    if (m.kind == "train") {
      ASSERT_TRUE(std::isfinite(m.get("loss")));
      epoch_loss[m.epoch].first += m.get("loss");
      epoch_loss[m.epoch].second += 1;
    }
    tested |= m.kind == "test" && m.has("test_rsum");
  }
  ASSERT_EQ(epoch_loss.size(), 4u);
  const double first = epoch_loss[0].first / epoch_loss[0].second, last = epoch_loss[3].first / epoch_loss[3].second;
  EXPECT_NEAR(first, 2 * std::log(8.0), 0.1);
  EXPECT_LT(last, first - 0.3) << "epoch 0 " << first << ", epoch 3 " << last;
  EXPECT_TRUE(tested);
}

TEST_F(TrainCommandTest, CocoFoldsReportTheFiveFoldMeanAndTheFullSplit) {
  // 10 test images: five folds of two, as COCO's 5K test set makes five 1K folds.
  ASSERT_EQ(run_cli({"synth", "--kind", "pairs", "--out", path("coco"), "--images", "24", "--dev_images", "5",
                     "--test_images", "10", "--regions", "4", "--feature_dim", "8", "--seed", "4"})
                .code,
            kExitOk);
  const CliResult r = run_cli(with_flag(train("triplet", "run", "1"), "--data_path", path("coco")) +
                              std::vector<std::string>{"--coco_folds"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("5-fold 1K"), std::string::npos) << r.out;
  run::MetricRecord test_record;
  for (const run::MetricRecord& m : run::read_metrics(path("run") + "/metrics.jsonl"))
    if (m.kind == "test") test_record = m;
  ASSERT_TRUE(test_record.has("test_rsum") && test_record.has("test_full_rsum"));
  // The same numbers from `rematch eval` on the best checkpoint: --folds 5 is the 1K mean, --folds 1 the full split.
  for (const auto& [folds, key] : {std::pair<std::string, std::string>{"5", "test_rsum"}, {"1", "test_full_rsum"}}) {
    const CliResult e = run_cli({"eval", "--checkpoint", path("run") + "/checkpoint_best.safetensors", "--data_path",
                                 path("coco"), "--data_name", "synth_precomp", "--split", "test", "--folds", folds,
                                 "--json"});
    ASSERT_EQ(e.code, kExitOk) << e.err;
    EXPECT_NEAR(nlohmann::json::parse(e.out).at("rsum").get<double>(), test_record.get(key), 1e-6) << key;
  }
  // Folds that do not divide the test split are refused before training: 8 images in 5 folds.
  const CliResult bad = run_cli(train("triplet", "bad", "1") + std::vector<std::string>{"--coco_folds"});
  EXPECT_NE(bad.code, kExitOk);
  EXPECT_NE(bad.err.find("--coco_folds"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(path("bad")));
}

TEST_F(TrainCommandTest, RcslAndRcslNcRunThroughTheCli) {
  const std::vector<std::string> small = {"--mine_epoch", "1", "--lr_milestones", "1", "--eval_batch", "16"};
  const CliResult semi = run_cli(with_flag(train("rcsl", "rcsl"), "--noise_ratio", "0") + small +
                                 std::vector<std::string>{"--paired_length", "10"});
  ASSERT_EQ(semi.code, kExitOk) << semi.err;
  const CliResult nc = run_cli(train("rcsl-nc", "nc") + small + std::vector<std::string>{"--warmup_epoch", "1"});
  ASSERT_EQ(nc.code, kExitOk) << nc.err;
  // rcsl keeps 10 of the 40 training images paired (50 of 200 captions); rcsl-nc warms up on every pair, then
  // splits the 40 % mismatched pairs off with its mixture model and logs the split's quality.
  // The tested state is the best of the mining stage (epoch 1 on, --mine_epoch 1), as RCSL's code tests
  // model_mining_best, even when the learning epoch validated higher.
  double semi_paired = -1, best_epoch = -1;
  bool nc_split_logged = false;
  for (const run::MetricRecord& m : run::read_metrics(path("rcsl") + "/metrics.jsonl")) {
    if (m.kind == "epoch_start" && m.has("paired_captions")) semi_paired = m.get("paired_captions");
    if (m.kind == "test") best_epoch = m.get("best_epoch");
  }
  EXPECT_EQ(best_epoch, 1.0);
  for (const run::MetricRecord& m : run::read_metrics(path("nc") + "/metrics.jsonl"))
    nc_split_logged |= m.kind == "epoch_start" && m.epoch == 1 && m.has("clean_precision");
  EXPECT_EQ(semi_paired, 50.0);
  EXPECT_TRUE(nc_split_logged);
  for (const char* run : {"rcsl", "nc"})
    for (const char* f : {"config.json", "checkpoint_best.safetensors", "results.md"})
      EXPECT_TRUE(std::filesystem::exists(path(run) + "/" + f)) << run << "/" << f;
}

TEST_F(TrainCommandTest, L2rmAndRcslNcRunsKeepEachEpochsSplit) {
  // splits/ (docs/viz.md §4.1): one file per epoch after the warm-up, one value per training caption, equal to
  // the clean set the epoch_start record counts; and for l2rm the split its checkpoint keeps (the last epoch's).
  ASSERT_EQ(run_cli(train("l2rm", "l2rm", "2") + std::vector<std::string>{"--warmup_epoch", "1"}).code, kExitOk);
  ASSERT_EQ(run_cli(train("rcsl-nc", "nc") + std::vector<std::string>{"--warmup_epoch", "1", "--mine_epoch", "1",
                                                                       "--lr_milestones", "1", "--eval_batch", "16"})
                .code,
            kExitOk);
  for (const char* run : {"l2rm", "nc"}) {
    const std::vector<viz::EpochSplit> splits = viz::read_epoch_splits(path(run));
    ASSERT_FALSE(splits.empty()) << run;
    EXPECT_EQ(splits.front().epoch, 1) << run;  // epoch 0 is the warm-up
    std::map<int64_t, double> clean_size;
    for (const run::MetricRecord& m : run::read_metrics(path(run) + "/metrics.jsonl"))
      if (m.kind == "epoch_start" && m.has("clean_size")) clean_size[m.epoch] = m.get("clean_size");
    for (const viz::EpochSplit& s : splits) {
      EXPECT_EQ(s.kind, viz::SplitKind::kept);
      EXPECT_EQ(s.values.size(), 200u) << run;  // 40 training images x 5 captions
      ASSERT_TRUE(clean_size.count(s.epoch)) << run << " epoch " << s.epoch;
      EXPECT_EQ(std::count(s.values.begin(), s.values.end(), 1.0), clean_size.at(s.epoch)) << run;
    }
  }
  const std::vector<int64_t> kept =
      train::TrainingState::load(path("l2rm") + "/checkpoint_latest.safetensors").get_int_vector("l2rm.clean");
  const viz::EpochSplit last = viz::read_epoch_splits(path("l2rm")).back();
  EXPECT_EQ(last.epoch, 2);
  EXPECT_EQ(std::vector<double>(kept.begin(), kept.end()), last.values);
  // A method that decides nothing per pair keeps no splits/.
  ASSERT_EQ(run_cli(train("triplet", "triplet", "1")).code, kExitOk);
  EXPECT_FALSE(std::filesystem::exists(path("triplet") + "/splits"));
}

TEST_F(TrainCommandTest, TheDataIsCheckedBeforeTrainingAndBeforeResuming) {
  // A dev feature file cut short: `rematch train` names it before a run folder exists.
  const std::string dev = path("synth") + "/synth_precomp/dev_ims.npy";
  const std::string saved = path("dev_ims.npy");
  std::filesystem::copy_file(dev, saved);
  std::filesystem::resize_file(dev, std::filesystem::file_size(dev) - 64);
  const CliResult cut = run_cli(train("triplet", "run"));
  EXPECT_EQ(cut.code, kExitFailure);
  EXPECT_NE(cut.err.find("data check"), std::string::npos) << cut.err;
  EXPECT_NE(cut.err.find("dev_ims.npy"), std::string::npos) << cut.err;
  EXPECT_FALSE(std::filesystem::exists(path("run")));
  // The same on --resume: a run made on good data, then its training captions lose a line.
  std::filesystem::copy_file(saved, dev, std::filesystem::copy_options::overwrite_existing);
  ASSERT_EQ(run_cli(train("triplet", "run", "1")).code, kExitOk);
  const std::string caps = path("synth") + "/synth_precomp/train_caps.txt";
  std::vector<std::string> lines;
  {
    std::ifstream in(caps);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  {
    std::ofstream out(caps, std::ios::trunc);
    for (size_t i = 0; i + 1 < lines.size(); ++i) out << lines[i] << "\n";
  }
  const CliResult resumed = run_cli({"train", "--resume", path("run")});
  EXPECT_EQ(resumed.code, kExitFailure);
  EXPECT_NE(resumed.err.find("train_caps.txt"), std::string::npos) << resumed.err;
}

TEST_F(TrainCommandTest, DemoMethodsAreCheckedBeforeAnyDataIsMade) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
      {"triplet,frobnicate", {"--methods frobnicate", "no such method", "l2rm"}},
      {"uotrcl", {"--methods uotrcl", "rematch train"}},           // class-labelled data
      {"rcl,triplet,rcl", {"--methods", "rcl is listed twice"}},
      {"triplet,rcsl", {"--methods rcsl", "--paired_length"}},      // needs what the demo does not give
  };
  for (const auto& [methods, parts] : bad) {
    const CliResult r = run_cli({"demo", "--out", path("demo"), "--methods", methods, "--progress", "none"});
    EXPECT_EQ(r.code, kExitUsage) << methods << ": " << r.err;
    for (const std::string& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("demo") + "/data")) << methods;
  }
}

TEST_F(TrainCommandTest, NanInTheDataStopsAtTheStepAndNamesTheOp) {
  // One training image with a NaN feature: the first step that sees it has a NaN loss.
  const std::string ims = path("synth") + "/synth_precomp/train_ims.npy";
  Tensor features = load_npy(ims);
  features.data<float>()[3 * features.size(1) * features.size(2)] = std::numeric_limits<float>::quiet_NaN();
  save_npy(ims, features);
  const CliResult r = run_cli(train("triplet", "run"));
  EXPECT_EQ(r.code, kExitFailure);
  for (const char* part : {"triplet", "step", "anomaly mode", "no checkpoint"})
    EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("run") + "/checkpoint_latest.safetensors"));
}

}  // namespace
}  // namespace rematch::cli
