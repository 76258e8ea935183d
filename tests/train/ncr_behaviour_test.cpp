// NCR's behaviour on the synthetic benchmark (docs/methods/ncr.md §7), with 60 % of the training images mismatched
// (image level): NCR (warm-up, then co-divide, co-rectify and soft margins) ends far above the VSE++ triplet baseline
// trained for the same epochs with the same model, data, learning rate and seed. The model and world are the demo's CPU
// ones (train/cli/demo_command.cpp: SAF, embed 64, batch 32, lr 5e-3, 500 training images), the run 5 epochs (NCR: 3
// warm-up + 2 co-training epochs, the ones that compete for the tested state as in co_train.py; triplet 5). Measured
// test rSum, ncr vs triplet (by hand with `rematch train`, the same flags): seed 0 under OPENBLAS_CORETYPE=Haswell
// 411.2 vs 41.4, Prescott 420.0 vs 27.4, SkylakeX 460.4 vs 26.2, unset (Cooperlake here) 469.0 vs 27.2; seeds 1-3 under
// Haswell 490.8 vs 53.6, 497.4 vs 40.0, 484.8 vs 31.0, unset 484.6 vs 44.8, 504.2 vs 44.8, 363.4 vs 37.8. The smallest
// gap is 326 (seed 3, unset); the test asserts 250. With a single co-training epoch the gap hung on that epoch alone:
// at the demo's high learning rate it fell from the warm-up's validation rSum 397.8 to 123.6 under Haswell kernels
// (test 137.8 vs 34.2, a gap of 104), while the other kernel families gave 218 to 309; the second epoch recovers in
// every case measured.
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
    for (const std::string& a : method == "ncr" ? std::vector<std::string>{"--warmup_epoch", "3", "--num_epochs", "2"}
                                                : std::vector<std::string>{"--num_epochs", "5"})
      args.push_back(a);
    const test::CliResult r = test::run_cli(args);
    ASSERT_EQ(r.code, kExitOk) << method << ": " << r.err;
    rsum[method] = test_rsum(path(method));
  }
  std::cout << "[ ncr behaviour ] test rSum: ncr " << rsum["ncr"] << ", triplet " << rsum["triplet"] << "\n";
  // rSum is at most 600; chance on 100 test images is about 6.
  EXPECT_GT(rsum["ncr"], rsum["triplet"] + 250);
}

}  // namespace
}  // namespace rematch::cli
