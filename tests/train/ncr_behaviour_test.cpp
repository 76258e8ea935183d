// NCR's behaviour on the synthetic benchmark (docs/methods/ncr.md §7), with 60 % of the training images mismatched
// (image level): NCR (warm-up, then co-divide, co-rectify and soft margins) ends far above the VSE++ triplet baseline
// trained for the same epochs with the same model, data, learning rate and seed. The model and world are the demo's
// CPU ones (train/cli/demo_command.cpp: SAF, embed 64, batch 32, lr 5e-3, 500 training images), the run 4 epochs
// (NCR: 3 warm-up + 1 co-training epoch, the one that competes for the tested state as in co_train.py; triplet 4)
// to keep the test near a minute on two cores.
// Measured test rSum, ncr vs triplet (by hand with `rematch train`, the same flags): seed 0 336.2 vs 27.2, seed 1
// 220.0 vs 41.4, seed 2 281.0 vs 36.8, seed 3 189.4 vs 37.0 (default OpenBLAS kernels); seed 0 under
// OPENBLAS_CORETYPE=Haswell 343.0 vs 29.8, Prescott 247.0 vs 27.4, SkylakeX 255.4 vs 33.6. The smallest gap is
// 152 (seed 3); the test asserts 100. (With 2 warm-up epochs the co-training epoch, at the demo's high learning
// rate, fell to 105.8 on seed 2: too close to triplet's 36.8 for a margin.)
#include <gtest/gtest.h>

#include <map>

#include "cli_runner.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/cli/demo_command.h"
#include "train/run/run_folder.h"

namespace rematch::cli {
namespace {

class NcrBehaviourTest : public rematch::test::TempDirTest {};

double test_rsum(const std::string& run) {
  for (const run::MetricRecord& r : run::read_metrics(run + "/metrics.jsonl"))
    if (r.kind == "test") return r.get("test_rsum");
  ADD_FAILURE() << "no test record in " << run;
  return 0;
}

TEST_F(NcrBehaviourTest, NcrBeatsTripletUnderSixtyPercentMismatches) {
  const std::string data = path("world");
  synth::write_pairs_world(synth::make_pairs_world(cli::demo_world(false)), data);  // the demo's CPU world, seed 0
  const std::vector<std::string> common = {
      "--data_path", data, "--data_name", "synth_precomp", "--embed_size", "64", "--word_dim", "32", "--sim_dim", "32",
      "--module_name", "SAF", "--dropout", "0.1", "--batch_size", "32", "--learning_rate", "5e-3", "--lr_update", "100",
      "--noise_ratio", "0.6", "--noise_mode", "image", "--val_subset", "sgraf", "--seed", "0", "--progress", "none",
      "--no_plots"};
  std::map<std::string, double> rsum;
  for (const std::string method : {"ncr", "triplet"}) {
    std::vector<std::string> args = {"train", "--method", method, "--run_dir", path(method)};
    args.insert(args.end(), common.begin(), common.end());
    for (const std::string& a : method == "ncr" ? std::vector<std::string>{"--warmup_epoch", "3", "--num_epochs", "1"}
                                                : std::vector<std::string>{"--num_epochs", "4"})
      args.push_back(a);
    const test::CliResult r = test::run_cli(args);
    ASSERT_EQ(r.code, kExitOk) << method << ": " << r.err;
    rsum[method] = test_rsum(path(method));
  }
  std::cout << "[ ncr behaviour ] test rSum: ncr " << rsum["ncr"] << ", triplet " << rsum["triplet"] << "\n";
  // rSum is at most 600; chance on 100 test images is about 6.
  EXPECT_GT(rsum["ncr"], rsum["triplet"] + 100);
}

}  // namespace
}  // namespace rematch::cli
