// `rematch train` on a run folder that cannot be written: a full disk (a small tmpfs, or a file-size limit
// where mounting is refused), a read-only file system and a folder without write permission. Each stops the
// run with exit code 1 and an error naming the file, its cause and what to do; the checkpoint saved before
// stays whole and loads, and `--resume` from it, once the fault is gone, ends with exactly the metrics of a
// run that never saw one. CI runs as root, which chmod does not stop: the permission faults drop root's
// override for the call (tests/disk_faults.h).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "disk_faults.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/run/training_state.h"

namespace rematch::cli {
namespace {

namespace fs = std::filesystem;
using test::CliResult;
using test::operator+;
using test::metric_lines;
using test::run_cli;

// What a failed run must leave: no temporary file, a metrics log of whole lines, and a checkpoint_latest that
// loads and holds the end of `epoch` (0-based).
void expect_whole_files_and_checkpoint_at(const std::string& run_dir, int64_t epoch) {
  for (const auto& e : fs::recursive_directory_iterator(run_dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  std::ifstream f(run_dir + "/metrics.jsonl", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(f)), {});
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const train::TrainingState s = train::TrainingState::load(run_dir + "/checkpoint_latest.safetensors");
  EXPECT_EQ(s.get_int("trainer.epoch"), epoch);
  EXPECT_EQ(s.get_int("trainer.epoch_done"), 1);
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' is not in:\n" << text;
}

// The advice of a run that stopped after the end of epoch 1 (the checkpoint of epoch 0).
std::string resume_advice(const std::string& run_dir) {
  return "Training stopped; the last checkpoint, " + run_dir + "/checkpoint_latest.safetensors (the end of epoch " +
         "1), is intact: once " + run_dir + " can be written again (free space on its disk, or make it writable), " +
         "continue with: rematch train --resume " + run_dir;
}

class DiskFaultTest : public rematch::test::TempDirTest {
 protected:
  void SetUp() override {
    rematch::test::TempDirTest::SetUp();
    // Readable by nobody too, for the tests that drop root's permission override.
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
    ASSERT_EQ(run_cli({"synth", "--kind", "pairs", "--out", path("synth"), "--images", "40", "--dev_images", "8",
                       "--test_images", "8", "--regions", "4", "--feature_dim", "8", "--seed", "3"})
                  .code,
              kExitOk);
  }
  std::vector<std::string> train(const std::string& run_dir, const std::string& epochs = "2") const {
    return {"train",      "--method",     "triplet",  "--data_path",  path("synth"), "--data_name",
            "synth_precomp", "--run_dir", run_dir,    "--batch_size", "8",           "--embed_size",
            "16",         "--word_dim",   "8",        "--sim_dim",    "8",           "--num_epochs",
            epochs,       "--progress",   "none",     "--noise_ratio", "0.4",        "--log_step", "1"};
  }
  static std::vector<std::string> resume(const std::string& run_dir) {
    return {"train", "--resume", run_dir, "--progress", "none"};
  }
  // The metrics of the same run with nothing in its way.
  std::vector<std::string> uninterrupted_metrics() {
    const CliResult r = run_cli(train(path("whole")));
    EXPECT_EQ(r.code, kExitOk) << r.err;
    return metric_lines(path("whole"));
  }
};

// A real full disk: a tmpfs with room for the first epoch's files and half a checkpoint more, so epoch 2 fails
// writing its checkpoint. Then the same folder on a read-only file system refuses the resume. Then, with room,
// the resume finishes the run.
TEST_F(DiskFaultTest, AFullThenReadOnlyTmpfsStopsTheRunAndResumeFinishesIt) {
  const std::string disk = path("disk");
  fs::create_directory(disk);
  rematch::test::SmallTmpfs tmpfs(disk, 64 << 20);
  if (!tmpfs.available()) GTEST_SKIP() << tmpfs.skip_reason();
  const std::vector<std::string> whole = uninterrupted_metrics();

  // What one epoch takes on this disk (a little more: the one-epoch run also wrote its results).
  ASSERT_EQ(run_cli(train(disk + "/probe", "1")).code, kExitOk);
  const size_t one_epoch = tmpfs.used_bytes();
  const size_t checkpoint = fs::file_size(disk + "/probe/checkpoint_latest.safetensors");
  fs::remove_all(disk + "/probe");
  ASSERT_GT(checkpoint, 32u << 10) << "half a checkpoint must leave room for epoch 2's metrics but not the checkpoint";
  ASSERT_TRUE(tmpfs.resize(one_epoch + checkpoint / 2));

  const std::string run = disk + "/run";
  const CliResult full = run_cli(train(run));
  EXPECT_EQ(full.code, kExitFailure);
  EXPECT_TRUE(contains(full.err, "rematch: error: save_safetensors '" + run + "/checkpoint_"));
  EXPECT_TRUE(contains(full.err, ".safetensors': write failed: No space left on device (the file system is full: "
                                 "free space on it or write somewhere else). " +
                                     resume_advice(run)));
  expect_whole_files_and_checkpoint_at(run, 0);

  ASSERT_TRUE(tmpfs.set_read_only(true));
  const CliResult read_only = run_cli(resume(run));
  ASSERT_TRUE(tmpfs.set_read_only(false));
  EXPECT_EQ(read_only.code, kExitFailure);
  EXPECT_TRUE(contains(read_only.err, "rematch: error: metrics log '" + run + "/metrics.jsonl': cannot open for "
                                      "appending: Read-only file system (the file system is mounted read-only: "
                                      "write somewhere else). " +
                                          resume_advice(run)));
  expect_whole_files_and_checkpoint_at(run, 0);

  ASSERT_TRUE(tmpfs.resize(64 << 20));
  const CliResult resumed = run_cli(resume(run));
  ASSERT_EQ(resumed.code, kExitOk) << resumed.err;
  EXPECT_EQ(metric_lines(run), whole);
}

// The same without mounting: the run folder may be written but its plots/ not, so the run stops at its first
// plot, after the checkpoint of epoch 1; then the whole folder is read-only and refuses the resume; then it is
// not.
TEST_F(DiskFaultTest, AFolderWithoutWritePermissionStopsTheRunAndResumeFinishesIt) {
  const std::vector<std::string> whole = uninterrupted_metrics();
  const std::string run = path("run");
  fs::create_directories(run + "/plots");
  ASSERT_EQ(::chmod(run.c_str(), 0777), 0);  // for nobody too
  ASSERT_EQ(::chmod((run + "/plots").c_str(), 0555), 0);
  CliResult denied, read_only;
  {
    rematch::test::NoPermissionOverride as_nobody;
    if (!as_nobody.ok()) GTEST_SKIP() << as_nobody.skip_reason();
    denied = run_cli(train(run));
  }
  EXPECT_EQ(denied.code, kExitFailure);
  EXPECT_TRUE(contains(denied.err, "rematch: error: save_png '" + run + "/plots/loss.png': cannot create temporary "
                                   "file '" + run + "/plots/loss.png.tmp."));
  EXPECT_TRUE(contains(denied.err, "': Permission denied (no permission to write there: make the folder writable "
                                   "or write somewhere else). " +
                                       resume_advice(run)));
  expect_whole_files_and_checkpoint_at(run, 0);

  for (const auto& e : fs::directory_iterator(run))
    if (e.is_regular_file()) ASSERT_EQ(::chmod(e.path().c_str(), 0444), 0);
  ASSERT_EQ(::chmod(run.c_str(), 0555), 0);
  {
    rematch::test::NoPermissionOverride as_nobody;
    ASSERT_TRUE(as_nobody.ok()) << as_nobody.skip_reason();
    read_only = run_cli(resume(run));
  }
  EXPECT_EQ(read_only.code, kExitFailure);
  EXPECT_TRUE(contains(read_only.err, "rematch: error: metrics log '" + run + "/metrics.jsonl': cannot open for "
                                      "appending: Permission denied (no permission to write there"));
  EXPECT_TRUE(contains(read_only.err, resume_advice(run)));
  expect_whole_files_and_checkpoint_at(run, 0);

  ASSERT_EQ(::chmod(run.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((run + "/plots").c_str(), 0755), 0);
  for (const auto& e : fs::directory_iterator(run))
    if (e.is_regular_file()) ASSERT_EQ(::chmod(e.path().c_str(), 0644), 0);
  const CliResult resumed = run_cli(resume(run));
  ASSERT_EQ(resumed.code, kExitOk) << resumed.err;
  EXPECT_EQ(metric_lines(run), whole);
}

// A file-size limit (works anywhere) below a checkpoint's size: the run fails writing its first checkpoint,
// leaves no part of one, says there is nothing to resume, and --overwrite starts it again once the limit is gone.
TEST_F(DiskFaultTest, AFailureBeforeTheFirstCheckpointSaysToStartAgain) {
  const std::vector<std::string> whole = uninterrupted_metrics();
  const size_t checkpoint = fs::file_size(path("whole/checkpoint_latest.safetensors"));
  const std::string run = path("run");
  CliResult limited;
  {
    rematch::test::FileSizeLimit limit(checkpoint / 2);
    ASSERT_TRUE(limit.ok());
    limited = run_cli(train(run));
  }
  EXPECT_EQ(limited.code, kExitFailure);
  EXPECT_TRUE(contains(limited.err, "rematch: error: save_safetensors '" + run + "/checkpoint_"));
  EXPECT_TRUE(contains(limited.err, ".safetensors': write failed: File too large (the file outgrew the largest file "
                                    "this file system or the file-size limit (ulimit -f) allows: raise the limit or "
                                    "write somewhere else). Training stopped before its first checkpoint: once " + run +
                                        " can be written again (free space on its disk, or make it writable), start "
                                        "again with --overwrite, or pick another --run_dir"));
  EXPECT_FALSE(fs::exists(run + "/checkpoint_latest.safetensors"));
  EXPECT_FALSE(fs::exists(run + "/checkpoint_best.safetensors"));

  const CliResult again = run_cli(train(run) + std::vector<std::string>{"--overwrite"});
  ASSERT_EQ(again.code, kExitOk) << again.err;
  EXPECT_EQ(metric_lines(run), whole);
}

}  // namespace
}  // namespace rematch::cli
