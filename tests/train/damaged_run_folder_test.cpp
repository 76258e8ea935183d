// Damaged run folders (the run-folder chaos tests' last part, tests/train/run_chaos_fixture.h): flipped bytes,
// lost or deleted checkpoints, temporary files of dead processes, checkpoints of an earlier format. Each says what
// is wrong and what to do, and what it resumes to is the run never interrupted, byte for byte.
#include <gtest/gtest.h>

#include "nn/safetensors.h"
#include "run_chaos_fixture.h"

#ifdef REMATCH_PROGRAM

namespace rematch::test {
namespace {

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
