// The fixture of the run-folder chaos tests (tests/train/run_chaos_test.cpp, damaged_run_folder_test.cpp): tiny
// runs of every method as real processes (tests/train/program_runner.h) in case folders beside a shared synthetic
// data set, the files a finished run leaves, and the run never interrupted to compare them with.
#pragma once

#ifdef REMATCH_PROGRAM
#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "nn/safetensors.h"
#include "test_util.h"
#include "train/methods/run_position.h"
#include "train/run/run_folder.h"
#include "train/run/training_state.h"

#include "program_runner.h"

namespace rematch::test {
namespace fs = std::filesystem;

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Tiny runs of every method: a few steps an epoch (--max_steps), so that a case takes well under a second.
inline std::vector<std::string> method_args(const std::string& method) {
  std::vector<std::string> a = {"train", "--method", method, "--run_dir", "run", "--progress", "none",
                                "--log_step", "1", "--seed", "5"};
  auto add = [&](std::initializer_list<const char*> more) { a.insert(a.end(), more.begin(), more.end()); };
  if (method == "uotrcl") {
    add({"--data_path", "../labeled/synth_labeled", "--num_epochs", "3", "--warmup_epoch", "1", "--batch_size", "20",
         "--hidden_dim", "16", "--output_dim", "8", "--confident_per_class", "5", "--knn", "5"});
    return a;
  }
  // The class-labelled baselines (MRL: its cosine schedule moves the learning rate every epoch).
  if (method == "mrl" || method == "dscmr" || method == "sdml") {
    add({"--data_path", "../labeled/synth_labeled", "--num_epochs", "3", "--batch_size", "20", "--noise_ratio", "0.4"});
    if (method == "mrl") add({"--hidden_dim", "16", "--output_dim", "8"});
    else if (method == "sdml") add({"--sdml_hidden_dim", "16", "--output_dim", "8"});
    else add({"--dscmr_hidden_dim", "16", "--dscmr_common_dim", "8"});
    return a;
  }
  // (Sizes at which OpenBLAS would use its own threads for the Bi-GRU's products: what made resume drift.)
  // (L2RM's main epochs train on the pairs its split keeps: a smaller batch leaves them several steps.)
  add({"--data_path", "../pairs", "--data_name", "synth_precomp", "--batch_size", method == "l2rm" ? "8" : "32",
       "--embed_size", "32",
       "--word_dim", "16", "--sim_dim", "16", "--max_steps", "4", "--eval_batch", "16"});
  if (method == "l2rm") add({"--warmup_epoch", "1", "--num_epochs", "1", "--noise_ratio", "0.4"});
  else if (method == "rcsl") add({"--num_epochs", "3", "--noise_ratio", "0", "--paired_length", "10", "--mine_epoch",
                                  "1", "--lr_milestones", "2"});
  else if (method == "rcsl-nc") add({"--num_epochs", "3", "--warmup_epoch", "1", "--mine_epoch", "1",
                                     "--lr_milestones", "2", "--noise_ratio", "0.4"});
  else if (method == "decl") add({"--warmup_epoch", "1", "--num_epochs", "1", "--noise_ratio", "0.4"});
  else if (method == "crcl") add({"--warmup_epoch", "1", "--schedules", "1", "1", "--noise_ratio", "0.4"});
  // (NCR: one co-training epoch is in the second half (epoch >= num_epochs // 2 = 0), so its steps alternate
  // labelled and unlabelled updates, and a resume can fall between the two.)
  else if (method == "ncr") add({"--warmup_epoch", "1", "--num_epochs", "1", "--noise_ratio", "0.4"});
  // (CREAM: hard and noisy pairs train from co-training epoch 0, so an iteration's clean, hard and noisy updates
  // follow each other and a resume can fall between them, with the pending labels and filters in the checkpoint.)
  else if (method == "cream") add({"--warmup_epoch", "1", "--num_epochs", "1", "--noise_ratio", "0.4",
                                   "--hard_start_epoch", "0", "--noisy_start_epoch", "0"});
  // (MSCN: a warm-up epoch and one MSCN epoch, i.e. its two halves; meta pairs drawn from the dev split; a rate at
  // which the warm-up of 4 steps leaves both splits clean pairs to train on.)
  else if (method == "mscn") add({"--warmup_epoch", "1", "--num_epochs", "1", "--noise_ratio", "0.4", "--meta_source",
                                  "dev", "--meta_size", "20", "--learning_rate", "2e-3"});
  // (BiCro: likewise; a resume can fall between an iteration's unlabelled and labelled updates.)
  else if (method == "bicro") add({"--warmup_epoch", "1", "--num_epochs", "1", "--noise_ratio", "0.4"});
  else add({"--num_epochs", "2", "--noise_ratio", "0.4"});
  return a;
}

// What a finished run leaves that must not depend on interruptions.
struct RunFiles {
  std::string metrics, latest, best, results;
};
inline RunFiles files_of(const std::string& run) {
  return {read_file(run + "/metrics.jsonl"), read_file(run + "/checkpoint_latest.safetensors"),
          read_file(run + "/checkpoint_best.safetensors"), read_file(run + "/results.md")};
}

inline std::vector<std::string> temporaries(const std::string& run) {
  std::vector<std::string> out;
  for (const std::string& dir : {run, run + "/plots"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().string());
  return out;
}

// The (kind, epoch, step) of metrics.jsonl's lines so far.
struct Line {
  std::string kind;
  int epoch = 0, step = 0;
};
inline std::vector<Line> metric_lines(const std::string& run) {
  std::vector<Line> out;
  std::ifstream f(run + "/metrics.jsonl");
  for (std::string s; std::getline(f, s);) {
    Line l;
    auto num = [&](const std::string& key) {
      const size_t at = s.find("\"" + key + "\":");
      return at == std::string::npos ? -1 : std::atoi(s.c_str() + at + key.size() + 3);
    };
    const size_t k = s.find("\"kind\":\"");
    if (k == std::string::npos) continue;
    l.kind = s.substr(k + 8, s.find('"', k + 8) - k - 8);
    l.epoch = num("epoch");
    l.step = num("step");
    out.push_back(l);
  }
  return out;
}

class RunChaosTest : public TempDirTest {
 protected:
  static void SetUpTestSuite() {
    data_ = (fs::temp_directory_path() / ("rematch_chaos_data_" + std::to_string(::getpid()))).string();
    fs::create_directories(data_);
    Program pairs({"synth", "--kind", "pairs", "--out", "pairs", "--images", "40", "--dev_images", "8",
                   "--test_images", "8", "--regions", "4", "--feature_dim", "16", "--seed", "3"},
                  data_, data_ + "/synth_pairs.log", 1);
    Program labeled({"synth", "--kind", "labeled", "--out", "labeled", "--samples", "200", "--valid_samples", "40",
                     "--test_samples", "40", "--classes", "4", "--img_dim", "16", "--txt_dim", "8"},
                    data_, data_ + "/synth_labeled.log", 1);
    ASSERT_EQ(pairs.wait(), 0) << pairs.log();
    ASSERT_EQ(labeled.wait(), 0) << labeled.log();
  }
  static void TearDownTestSuite() { fs::remove_all(data_); }

  // A case folder beside the data (the runs name it ../pairs), holding "run".
  std::string case_dir(const std::string& name) {
    const std::string d = data_ + "/" + std::to_string(::getpid()) + "_" + name;
    fs::remove_all(d);
    fs::create_directories(d);
    cases_.push_back(d);
    return d;
  }
  void TearDown() override {
    for (const std::string& d : cases_) fs::remove_all(d);
    TempDirTest::TearDown();
  }

  // The run never interrupted, at `threads`, for `method` (once per test).
  RunFiles straight(const std::string& method, int threads, const std::vector<std::string>& env = {}) {
    const std::string key = method + "@" + std::to_string(threads);
    auto it = straight_.find(key);
    if (it != straight_.end()) return it->second;
    const std::string d = case_dir("straight_" + method + "_" + std::to_string(threads));
    Program p(method_args(method), d, d + "/log", threads, env);
    EXPECT_EQ(p.wait(), 0) << p.log();
    return straight_[key] = files_of(d + "/run");
  }

  // Resumes d/run until it finishes (a resume that is itself interrupted is not expected here).
  void resume_to_end(const std::string& d, int threads, const std::string& what,
                     const std::vector<std::string>& env = {}) {
    Program r({"train", "--resume", "run", "--progress", "none"}, d, d + "/resume.log", threads, env);
    ASSERT_EQ(r.wait(), 0) << what << ": the resume failed:\n" << r.log();
    EXPECT_TRUE(temporaries(d + "/run").empty()) << what << ": temporary files left after the resume";
  }

  void expect_same_run(const std::string& method, int threads, const std::string& d, const std::string& what) {
    const RunFiles want = straight(method, threads), got = files_of(d + "/run");
    EXPECT_EQ(got.metrics, want.metrics) << what << ": metrics.jsonl differs from the run never interrupted";
    EXPECT_TRUE(got.latest == want.latest) << what << ": checkpoint_latest differs";
    EXPECT_TRUE(got.best == want.best) << what << ": checkpoint_best differs";
    EXPECT_EQ(got.results, want.results) << what << ": results.md differs";
  }

  inline static std::string data_;
  std::vector<std::string> cases_;
  std::map<std::string, RunFiles> straight_;
};

}  // namespace rematch::test

#endif  // REMATCH_PROGRAM
