// The run folder under attack: `rematch train` processes interrupted (SIGINT mid-epoch and right
// after a validation), killed (SIGKILL at seeded random moments, inside a checkpoint write, as config.json
// appears) and resumed, for every method at 1, 2 and 4 threads, must end with the metrics and checkpoints of
// the same run never interrupted, byte for byte; a second writer is refused. The processes are real
// (tests/train/program_runner.h); the fixture is tests/train/run_chaos_fixture.h, and damaged folders are
// tests/train/damaged_run_folder_test.cpp's.
#include <gtest/gtest.h>
#include <poll.h>

#include "run_chaos_fixture.h"

#ifdef REMATCH_PROGRAM

namespace rematch::test {
namespace {

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

}  // namespace
}  // namespace rematch::test

#endif  // REMATCH_PROGRAM
