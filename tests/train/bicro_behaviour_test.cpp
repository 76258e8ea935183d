// BiCro's behaviour on the synthetic benchmark (docs/methods/bicro.md §8), with 60 % of the training images
// mismatched (image level): BiCro's co-training (the split, the anchors' consistency labels and the soft margins)
// ends far above the VSE++ triplet baseline trained for the same epochs with the same model, data, learning rate and
// seed. The model and world are the demo's CPU ones (train/cli/demo_command.cpp: SAF, embed 64, batch 32, lr 5e-3,
// 500 training images), the run 4 epochs (BiCro: 3 warm-up + 1 co-training epoch, the one that competes for the
// tested state as in co_train.py; triplet 4), as NCR's test (ncr_behaviour_test.cpp), with --warmup_rate 1: the
// warm-up on every pair of each batch (NCR's). With BiCro's own shares (0.3 in the scripts, 0.5 in run.py) the
// selective warm-up takes off after a number of epochs that changes with the seed and with the OpenBLAS kernels
// (seed 0, run.py's defaults, 6 warm-up + 1 co-training epochs: test rSum 40.2 unset, 425 (6 + 3) under Haswell;
// seeds 1, 2: 40.2, 53.8), and a co-training epoch on a weak model collapses it (the hardest-negative triplet with
// margins from the labels, on a split of precision ~0.5): no margin would hold within a test's budget.
// Measured test rSum, bicro vs triplet (by hand with `rematch train`, the same flags; triplet's are NCR's test's,
// the same runs): seed 0 325.4 vs 27.2, seed 1 267.6 vs 41.4, seed 2 347.0 vs 36.8, seed 3 134.8 vs 37.0
// (OPENBLAS_CORETYPE unset); seed 0 under Haswell 101.8 vs 29.8, Prescott 344.6 vs 27.4, SkylakeX 208.6 vs 33.6.
// The smallest gap is 72 (seed 0, Haswell; the co-training epoch takes the warm-up's 398 on validation to 127); the
// test asserts 40.
#include <gtest/gtest.h>

#include <map>

#include "cli_runner.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/cli/demo_command.h"
#include "train/run/run_folder.h"

namespace rematch::cli {
namespace {

class BicroBehaviourTest : public rematch::test::TempDirTest {};

double test_rsum(const std::string& run) {
  for (const run::MetricRecord& r : run::read_metrics(run + "/metrics.jsonl"))
    if (r.kind == "test") return r.get("test_rsum");
  ADD_FAILURE() << "no test record in " << run;
  return 0;
}

TEST_F(BicroBehaviourTest, BicroBeatsTripletUnderSixtyPercentMismatches) {
  const std::string data = path("world");
  synth::write_pairs_world(synth::make_pairs_world(cli::demo_world(false)), data);  // the demo's CPU world, seed 0
  const std::vector<std::string> common = {
      "--data_path", data, "--data_name", "synth_precomp", "--embed_size", "64", "--word_dim", "32", "--sim_dim", "32",
      "--module_name", "SAF", "--dropout", "0.1", "--batch_size", "32", "--learning_rate", "5e-3", "--lr_update", "100",
      "--noise_ratio", "0.6", "--noise_mode", "image", "--val_subset", "sgraf", "--seed", "0", "--progress", "none",
      "--no_plots"};
  std::map<std::string, double> rsum;
  for (const std::string method : {"bicro", "triplet"}) {
    std::vector<std::string> args = {"train", "--method", method, "--run_dir", path(method)};
    args.insert(args.end(), common.begin(), common.end());
    for (const std::string& a : method == "bicro"
                                    ? std::vector<std::string>{"--warmup_epoch", "3", "--num_epochs", "1",
                                                               "--warmup_rate", "1"}
                                    : std::vector<std::string>{"--num_epochs", "4"})
      args.push_back(a);
    const test::CliResult r = test::run_cli(args);
    ASSERT_EQ(r.code, kExitOk) << method << ": " << r.err;
    rsum[method] = test_rsum(path(method));
  }
  std::cout << "[ bicro behaviour ] test rSum: bicro " << rsum["bicro"] << ", triplet " << rsum["triplet"] << "\n";
  // rSum is at most 600; chance on 100 test images is about 6.
  EXPECT_GT(rsum["bicro"], rsum["triplet"] + 40);
}

}  // namespace
}  // namespace rematch::cli
