// The run folder under attack: `rematch train` processes interrupted (SIGINT mid-epoch and right
// after a validation), killed (SIGKILL at seeded random moments, inside a checkpoint write, as config.json
// appears) and resumed, for every method at 1, 2 and 4 threads, must end with the metrics and checkpoints of
// the same run never interrupted, byte for byte; a second writer is refused; every damaged folder gets the
// message that says what is wrong and what to do. The processes are real (tests/train/program_runner.h).
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

#ifdef REMATCH_PROGRAM
#include "program_runner.h"

namespace rematch::test {
namespace {
namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Tiny runs of every method: a few steps an epoch (--max_steps), so that a case takes well under a second.
std::vector<std::string> method_args(const std::string& method) {
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
RunFiles files_of(const std::string& run) {
  return {read_file(run + "/metrics.jsonl"), read_file(run + "/checkpoint_latest.safetensors"),
          read_file(run + "/checkpoint_best.safetensors"), read_file(run + "/results.md")};
}

std::vector<std::string> temporaries(const std::string& run) {
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
std::vector<Line> metric_lines(const std::string& run) {
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

  static std::string data_;
  std::vector<std::string> cases_;
  std::map<std::string, RunFiles> straight_;
};
std::string RunChaosTest::data_;

// --- Bit-exact resume: every method, 1, 2 and 4 threads, SIGINT mid-epoch and right after a validation,
// SIGKILL at a seeded random moment.

class ResumeExactTest : public RunChaosTest, public ::testing::WithParamInterface<std::tuple<std::string, int>> {};

// OpenBLAS's kernel family per thread count, so the cases also cover kernels this CPU would not pick: 1 thread
// the CPU's own, 2 threads Haswell's (AVX2, where the CPU has it), 4 threads Prescott's (any x86-64). Resume
// drifted with the last two before OpenBLAS was set to one thread everywhere (tensor/cpu/blas_threads.h).
std::vector<std::string> kernel_env(int threads) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string info((std::istreambuf_iterator<char>(cpuinfo)), {});
  if (threads == 2 && info.find(" avx2") != std::string::npos) return {"OPENBLAS_CORETYPE=Haswell"};
  if (threads == 4) return {"OPENBLAS_CORETYPE=Prescott"};
  return {};
}

TEST_P(ResumeExactTest, InterruptedOrKilledRunsResumeToTheSameBytes) {
  const auto [method, threads] = GetParam();
  const std::vector<std::string> env = kernel_env(threads);
  const RunFiles want = straight(method, threads, env);
  ASSERT_FALSE(want.metrics.empty());
  struct Cut {
    std::string name;
    int signal;
    std::function<bool(const std::vector<Line>&)> when;
  };
  // The second epoch's first step (mid-epoch), and the first validation line (the next thing is a step). A
  // signal that comes only after the last step (a loaded machine) finds a run that ends normally: exit 0.
  const std::vector<Cut> cuts = {
      {"SIGINT mid-epoch", SIGINT,
       [](const std::vector<Line>& ls) {
         for (const Line& l : ls)
           if (l.kind == "train" && l.epoch == 1 && l.step >= 1) return true;
         return false;
       }},
      {"SIGINT after validation", SIGINT, [](const std::vector<Line>& ls) {
         for (const Line& l : ls)
           if (l.kind == "val") return true;
         return false;
       }}};
  for (const Cut& cut : cuts) {
    const std::string what = method + " at " + std::to_string(threads) + " threads, " + cut.name;
    const std::string d = case_dir("cut");
    Program p(method_args(method), d, d + "/log", threads, env);
    ASSERT_TRUE(wait_until(p, [&] { return cut.when(metric_lines(d + "/run")); })) << what << ": never reached\n"
                                                                                    << p.log();
    p.signal(cut.signal);
    const int code = p.wait();
    ASSERT_TRUE(code == 130 || code == 0) << what << ": exit " << code << "\n" << p.log();
    if (code == 130) resume_to_end(d, threads, what, env);
    expect_same_run(method, threads, d, what);
  }
  // SIGKILL at a random moment of the run (seeded by the case, so a failure repeats).
  std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>()(method) + threads));
  const std::string d = case_dir("kill");
  const int total_lines = static_cast<int>(std::count(want.metrics.begin(), want.metrics.end(), '\n'));
  const int at_line = std::uniform_int_distribution<int>(1, std::max(1, total_lines - 2))(rng);
  const std::string what = method + " at " + std::to_string(threads) + " threads, SIGKILL at metrics line " +
                           std::to_string(at_line);
  Program p(method_args(method), d, d + "/log", threads, env);
  ASSERT_TRUE(wait_until(p, [&] { return static_cast<int>(metric_lines(d + "/run").size()) >= at_line; })) << what;
  p.signal(SIGKILL);
  p.wait();
  resume_to_end(d, threads, what, env);
  expect_same_run(method, threads, d, what);
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  std::string m = std::get<0>(info.param);
  for (char& c : m)
    if (c == '-') c = '_';
  return m + "_" + std::to_string(std::get<1>(info.param)) + "threads";
}

INSTANTIATE_TEST_SUITE_P(EveryMethod, ResumeExactTest,
                         ::testing::Combine(::testing::Values("triplet", "infonce", "rcl", "l2rm", "rcsl", "rcsl-nc",
                                                              "uotrcl", "decl", "crcl", "ncr", "bicro", "mscn", "mrl",
                                                              "dscmr", "sdml", "cream"),
                                            ::testing::Values(1, 2, 4)),
                         case_name);

// --- Kills at the moments that used to lose data.

// `sig` the moment a file named by `needle` appears in d/run (through inotify, not polling).
// True when the kill came before the process ended.
// `needle` ending in '.' matches names that start with it; otherwise the whole name must equal it.
bool kill_when_created(Program& p, const std::string& run, const std::string& needle, int sig) {
  auto matches = [&](const std::string& name) {
    return needle.back() == '.' ? name.compare(0, needle.size(), needle) == 0 : name == needle;
  };
  FolderWatch watch(run);
  if (!watch.ok()) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && !p.ended()) {
    for (const std::string& name : watch.names())
      if (matches(name)) {
        p.signal(sig);
        return true;
      }
    // (poll on the inotify descriptor would wake at once; 1 ms granularity is plenty for the writes here)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

TEST_F(RunChaosTest, KillsInsideCheckpointWritesResumeToTheSameBytesAndLeaveNoTemporaryFile) {
  int inside = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::string d = case_dir("in_write");
    fs::create_directories(d + "/run");
    Program p(method_args("triplet"), d, d + "/log", 2);
    ASSERT_TRUE(kill_when_created(p, d + "/run", "checkpoint_" + std::string(attempt % 2 ? "best" : "latest") +
                                                     ".safetensors.tmp.", SIGKILL));
    p.wait();
    if (!temporaries(d + "/run").empty()) ++inside;  // the kill landed before the rename
    resume_to_end(d, 2, "SIGKILL inside a checkpoint write");
    expect_same_run("triplet", 2, d, "SIGKILL inside a checkpoint write");
  }
  std::cout << "kills that left a temporary file (inside the write): " << inside << " of 4\n";
}

TEST_F(RunChaosTest, ASignalAsConfigAppearsIsHandledAndAKillBeforeTheFirstCheckpointResumesFromTheStart) {
  {  // SIGINT the moment config.json is renamed into place: the handler is already installed
    const std::string d = case_dir("int_config");
    fs::create_directories(d + "/run");
    Program p(method_args("triplet"), d, d + "/log", 1);
    ASSERT_TRUE(kill_when_created(p, d + "/run", "config.json", SIGINT));
    ASSERT_EQ(p.wait(), 130) << p.log();
    EXPECT_NE(p.log().find("continue with: rematch train --resume run"), std::string::npos) << p.log();
    resume_to_end(d, 1, "SIGINT as config.json appears");
    expect_same_run("triplet", 1, d, "SIGINT as config.json appears");
  }
  {  // SIGKILL then: a config and no checkpoint
    const std::string d = case_dir("kill_config");
    fs::create_directories(d + "/run");
    Program p(method_args("triplet"), d, d + "/log", 1);
    ASSERT_TRUE(kill_when_created(p, d + "/run", "config.json", SIGKILL));
    EXPECT_EQ(p.wait(), 128 + SIGKILL);
    ASSERT_FALSE(fs::exists(d + "/run/checkpoint_latest.safetensors"));
    Program r({"train", "--resume", "run", "--progress", "none"}, d, d + "/resume.log", 1);
    ASSERT_EQ(r.wait(), 0) << r.log();
    EXPECT_NE(r.log().find("holds no checkpoint yet"), std::string::npos) << r.log();
    expect_same_run("triplet", 1, d, "SIGKILL before the first checkpoint");
  }
}

// --- One writer.

TEST_F(RunChaosTest, ASecondWriterIsRefusedAtOnceAndTheFirstRunLosesNothing) {
  const std::string d = case_dir("two");
  Program first(method_args("triplet"), d, d + "/log", 1);
  ASSERT_TRUE(wait_until(first, [&] { return metric_lines(d + "/run").size() >= 2; })) << first.log();
  Program second({"train", "--resume", "run", "--progress", "none"}, d, d + "/second.log", 1);
  EXPECT_EQ(second.wait(10), 1) << second.log();
  EXPECT_NE(second.log().find("another process is writing this run (pid " + std::to_string(first.pid())),
            std::string::npos)
      << second.log();
  // Readers take no lock: a dry run of the resume reads config.json while the run goes.
  Program reader({"train", "--resume", "run", "--dry_run"}, d, d + "/reader.log", 1);
  EXPECT_EQ(reader.wait(10), 0) << reader.log();
  EXPECT_NE(reader.log().find("\"method\": \"triplet\""), std::string::npos) << reader.log();
  ASSERT_EQ(first.wait(), 0) << first.log();
  expect_same_run("triplet", 1, d, "with a second writer refused");
}

// --- Damaged folders: each says what is wrong and what to do.

class DamagedFolderTest : public RunChaosTest {
 protected:
  // A finished triplet run (1 thread) in a new case folder.
  std::string finished(const std::string& name) {
    const std::string d = case_dir(name);
    Program p(method_args("triplet"), d, d + "/log", 1);
    EXPECT_EQ(p.wait(), 0) << p.log();
    return d;
  }
  Program resume(const std::string& d, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"train", "--resume", "run", "--progress", "none"};
    args.insert(args.end(), more.begin(), more.end());
    return Program(args, d, d + "/resume.log", 1);
  }
  static void flip_tensor_bytes(const std::string& path) {
    std::string b = read_file(path);
    uint64_t n = 0;
    std::memcpy(&n, b.data(), 8);
    for (size_t i = 0; i < 8; ++i) b[8 + n + 64 + i] = static_cast<char>(b[8 + n + 64 + i] ^ 0x5a);
    std::ofstream(path, std::ios::binary) << b;
  }
};

TEST_F(DamagedFolderTest, FlippedBytesInLatestFallBackToBestAndGiveTheSameRun) {
  const std::string d = finished("flip_latest");
  flip_tensor_bytes(d + "/run/checkpoint_latest.safetensors");
  Program r = resume(d);
  ASSERT_EQ(r.wait(), 0) << r.log();
  const std::string log = r.log();
  EXPECT_NE(log.find("checkpoint_latest.safetensors cannot be used"), std::string::npos) << log;
  EXPECT_NE(log.find("the file is damaged"), std::string::npos) << log;
  EXPECT_NE(log.find("resuming from run/checkpoint_best.safetensors"), std::string::npos) << log;
  expect_same_run("triplet", 1, d, "latest damaged");
}

TEST_F(DamagedFolderTest, BothDamagedIsRefusedWithWhatToDoAndRestartGivesTheSameRun) {
  const std::string d = finished("flip_both");
  flip_tensor_bytes(d + "/run/checkpoint_latest.safetensors");
  flip_tensor_bytes(d + "/run/checkpoint_best.safetensors");
  Program r = resume(d);
  EXPECT_EQ(r.wait(), 1);
  const std::string log = r.log();
  for (const char* s : {"cannot resume", "checkpoint_latest.safetensors cannot be used",
                        "checkpoint_best.safetensors cannot be used", "--resume run --restart"})
    EXPECT_NE(log.find(s), std::string::npos) << s << "\n" << log;
  Program again = resume(d, {"--restart"});
  ASSERT_EQ(again.wait(), 0) << again.log();
  expect_same_run("triplet", 1, d, "--restart");
}

// Both checkpoints deleted from a run whose metrics.jsonl records its epochs: not "a run that stopped before its
// first checkpoint" (that one starts again by itself, above); refused naming the files and the epochs, the
// records kept, until --restart asks for the new start. --restart deletes only the plots rematch wrote.
TEST_F(DamagedFolderTest, BothCheckpointsDeletedIsRefusedNamingTheRecordedEpochsAndRestartGivesTheSameRun) {
  const std::string d = finished("deleted_both");
  fs::remove(d + "/run/checkpoint_latest.safetensors");
  fs::remove(d + "/run/checkpoint_best.safetensors");
  const std::string metrics_before = read_file(d + "/run/metrics.jsonl");
  Program r = resume(d);
  EXPECT_EQ(r.wait(), 1) << r.log();
  const std::string log = r.log();
  for (const char* s : {"run folder 'run': cannot resume: run/checkpoint_latest.safetensors and "
                        "run/checkpoint_best.safetensors are missing, though run/metrics.jsonl records 2 finished "
                        "epochs", "Put the checkpoints back if they were moved", "rematch train --resume run --restart"})
    EXPECT_NE(log.find(s), std::string::npos) << s << "\n" << log;
  EXPECT_EQ(log.find("holds no checkpoint yet"), std::string::npos) << log;
  EXPECT_EQ(read_file(d + "/run/metrics.jsonl"), metrics_before);
  std::ofstream(d + "/run/plots/figure_for_paper.png", std::ios::binary) << "MY FIGURE";
  Program again = resume(d, {"--restart"});
  ASSERT_EQ(again.wait(), 0) << again.log();
  expect_same_run("triplet", 1, d, "--restart after both checkpoints were deleted");
  EXPECT_EQ(read_file(d + "/run/plots/figure_for_paper.png"), "MY FIGURE");
}

TEST_F(DamagedFolderTest, ALostBestIsFoundBeforeTrainingAndRemakeBestContinues) {
  // Stopped mid-epoch 2: the best state (epoch 1) is not checkpoint_latest's.
  const std::string d = case_dir("lost_best");
  Program p(method_args("triplet"), d, d + "/log", 1);
  ASSERT_TRUE(wait_until(p, [&] {
    for (const Line& l : metric_lines(d + "/run"))
      if (l.kind == "train" && l.epoch == 1 && l.step >= 2) return true;
    return false;
  }));
  p.signal(SIGINT);
  ASSERT_EQ(p.wait(), 130);
  fs::remove(d + "/run/checkpoint_best.safetensors");
  const std::string metrics_before = read_file(d + "/run/metrics.jsonl");
  Program r = resume(d);
  EXPECT_EQ(r.wait(), 1);
  const std::string log = r.log();
  for (const char* s : {"checkpoint_best.safetensors does not exist", "the best validated state (epoch 1)",
                        "--resume run --remake_best", "--resume run --restart"})
    EXPECT_NE(log.find(s), std::string::npos) << s << "\n" << log;
  EXPECT_EQ(log.find("data:"), std::string::npos) << "read the data before refusing:\n" << log;
  EXPECT_EQ(read_file(d + "/run/metrics.jsonl"), metrics_before);
  Program remade = resume(d, {"--remake_best"});
  ASSERT_EQ(remade.wait(), 0) << remade.log();
  EXPECT_NE(remade.log().find("--remake_best: the best state is taken again"), std::string::npos) << remade.log();
  EXPECT_TRUE(fs::exists(d + "/run/checkpoint_best.safetensors"));
}

TEST_F(DamagedFolderTest, ALostBestThatLatestHoldsIsRemadeFromIt) {
  const std::string d = finished("best_is_latest");
  const train::RunPosition pos =
      train::get_position(train::TrainingState::load(d + "/run/checkpoint_latest.safetensors"));
  fs::remove(d + "/run/checkpoint_best.safetensors");
  Program r = resume(d);
  if (pos.best_epoch == pos.epoch) {
    ASSERT_EQ(r.wait(), 0) << r.log();
    EXPECT_NE(r.log().find("re-made it from run/checkpoint_latest.safetensors"), std::string::npos) << r.log();
    expect_same_run("triplet", 1, d, "best re-made from latest");
  } else {  // the seed's last epoch was not its best: then it is the refusal of the test above
    EXPECT_EQ(r.wait(), 1);
    EXPECT_NE(r.log().find("--remake_best"), std::string::npos) << r.log();
  }
}

TEST_F(DamagedFolderTest, TemporaryFilesOfDeadProcessesAreRemovedAndALiveOnesKept) {
  const std::string d = finished("temporaries");
  Program dead({"--version"}, d, d + "/dead.log", 1);  // a process that has ended: its pid is free
  dead.wait();
  const std::string dead_tmp = d + "/run/checkpoint_latest.safetensors.tmp." + std::to_string(dead.pid()) + ".0";
  const std::string dead_plot = d + "/run/plots/loss.png.tmp." + std::to_string(dead.pid()) + ".3";
  const std::string live_tmp = d + "/run/checkpoint_best.safetensors.tmp." + std::to_string(::getpid()) + ".0";
  for (const std::string& f : {dead_tmp, dead_plot, live_tmp}) std::ofstream(f) << "partial";
  Program r = resume(d);
  ASSERT_EQ(r.wait(), 0) << r.log();
  EXPECT_FALSE(fs::exists(dead_tmp));
  EXPECT_FALSE(fs::exists(dead_plot));
  EXPECT_TRUE(fs::exists(live_tmp)) << "a live process's temporary file was deleted";
  const std::string relative = "run/checkpoint_latest.safetensors.tmp." + std::to_string(dead.pid()) + ".0";
  EXPECT_NE(r.log().find("removed " + relative + ", a temporary file left by a process that is no longer running"),
            std::string::npos)
      << r.log();
  fs::remove(live_tmp);
}

TEST_F(DamagedFolderTest, CheckpointsWithoutChecksumStillResumeAndSaySoOnce) {
  const std::string d = finished("legacy");
  for (const char* name : {"/run/checkpoint_latest.safetensors", "/run/checkpoint_best.safetensors"}) {
    const nn::SafetensorsFile f = nn::load_safetensors(d + name);
    ASSERT_TRUE(f.checksum_verified);
    nn::save_safetensors(d + name, f.tensors, f.metadata, /*checksum=*/false);  // as the previous format wrote it
  }
  Program r = resume(d);
  ASSERT_EQ(r.wait(), 0) << r.log();
  const std::string log = r.log();
  const std::string said = "carry no checksum (written by an earlier rematch)";
  const size_t note = log.find(said);
  ASSERT_NE(note, std::string::npos) << log;
  EXPECT_EQ(log.find("no checksum", note + said.size()), std::string::npos) << "said more than once:\n" << log;
}

}  // namespace
}  // namespace rematch::test

#endif  // REMATCH_PROGRAM
