// A run folder written by an earlier rematch resumes ("config.json keeps its flat keys"): the folders
// of tests/fixtures/old_run/runs/ were written by the `rematch` of commit 95b1a69 (before the per-method option
// tables), each stopped by SIGINT in the middle of an epoch:
//   l2rm    --data_path data --data_name tiny_precomp --noise_ratio 0.5 --batch_size 4 --embed_size 8
//           --word_dim 4 --sim_dim 4 --warmup_epoch 1 --num_epochs 2   (stopped in the warm-up, epoch 1 step 6)
//   rcsl    --data_path data --data_name tiny_precomp --paired_length 6 --batch_size 8 --num_epochs 3
//           --mine_epoch 1 --lr_milestones 2 --embed_size 8 --word_dim 4   (epoch 2 step 2, the mining stage)
//   uotrcl  --data_path data/labeled --noise_ratio 0.2 --batch_size 10 --num_epochs 3 --warmup_epoch 1
//           --hidden_dim 8 --output_dim 4 --knn 3 --valid_len 0   (epoch 2 step 2, the main phase)
// all with --progress plain --log_step 1 --no_plots, run from tests/fixtures/old_run/ (data paths relative to
// it). Each is copied and resumed by today's program: its config.json (the old flat keys) is read and checked,
// the checkpoints' config hash matches, the run trains to its end and is tested, and config.json is unchanged.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "program_runner.h"
#include "test_util.h"

namespace rematch::test {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class OldRunResume : public TempDirTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(OldRunResume, ContinuesToItsEnd) {
  const std::string method = GetParam();
  const fs::path fixture = fs::path(REMATCH_FIXTURES) / "old_run";
  fs::copy(fixture, dir_, fs::copy_options::recursive);
  const std::string run = "runs/" + method;
  fs::create_directories(dir_ / run / "plots");
  const std::string config_before = read_file(path(run + "/config.json"));
  ASSERT_FALSE(config_before.empty());

  Program p({"train", "--resume", run, "--progress", "plain"}, dir_.string(), path("resume.log"), 1);
  const int code = p.wait(120);
  const std::string log = p.log();
  ASSERT_EQ(code, 0) << log;
  EXPECT_NE(log.find("resuming " + run + " at epoch"), std::string::npos) << log;
  EXPECT_EQ(log.find("another run"), std::string::npos) << log;
  EXPECT_EQ(read_file(path(run + "/config.json")), config_before);
  EXPECT_TRUE(fs::exists(path(run + "/results.md")));
  EXPECT_TRUE(fs::exists(path(run + "/checkpoint_best.safetensors")));
  const std::string metrics = read_file(path(run + "/metrics.jsonl"));
  EXPECT_NE(metrics.find("\"kind\":\"test\""), std::string::npos) << metrics;
}

INSTANTIATE_TEST_SUITE_P(Methods, OldRunResume, ::testing::Values("l2rm", "rcsl", "uotrcl"));

}  // namespace
}  // namespace rematch::test
