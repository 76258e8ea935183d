// CRCL's behaviour on the synthetic benchmark (docs/methods/crcl.md §9.6): with 60 % of the training images
// mismatched, CRCL ends far above the VSE++ triplet loss trained on the same data, model, seed and epochs.
// The setting is the demo's CPU one (train/cli/demo_command.cpp: 500 training images of 6 regions, 8 concepts ×
// 4 attributes, no twins; SAF, embed 64, batch 32, lr 5e-3, image-level mismatches) with 9 epochs each: triplet
// 9 epochs, CRCL one round of 4 warm-up and 5 main epochs (--warmup_epoch 4 --schedules 5), augmentation on.
// Why 4 warm-up epochs and not the official 2: after 2 epochs at 60 % mismatches this small model is still near
// chance, so the labels start from p ≈ 1/B, the 0.1 floor zeroes nearly all of them and only the complementary
// term trains; it takes off late, at an epoch that depends on the seed and the kernels (with 2 warm-up epochs the
// test rSum was 383.4, 526.2, 479.0, 494.8 for seeds 0–3 and 497.0, 475.4, 140.6 for seed 0 under Haswell,
// Prescott and SkylakeX). With 4 the labels start from a model that ranks: every run below has dev rSum ≥ 389
// after its 4th epoch.
// Measured test rSum (rSum ≤ 600; chance on 100 test images ≈ 6), CRCL vs triplet:
//   native kernels (an AVX-512 CPU): seed 0 499.2 vs 39.2, seed 1 527.4 vs 41.4, seed 2 517.2 vs 31.0,
//   seed 3 521.8 vs 31.2; seed 0 with OPENBLAS_CORETYPE=Haswell 505.0 vs 46.2, Prescott 499.2 vs 27.4,
//   SkylakeX 490.8 vs 25.2.
// Smallest CRCL rSum 490.8, smallest gap 458.8 (Haswell): the test asks for CRCL above 350 and 250 above triplet.
#include <gtest/gtest.h>

#include <map>

#include "cli_runner.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/cli/demo_command.h"
#include "train/run/run_folder.h"
#include "train/synth/pairs_world.h"

namespace rematch::cli {
namespace {

class CrclBehaviourTest : public rematch::test::TempDirTest {};

TEST_F(CrclBehaviourTest, CrclBeatsTripletUnderSixtyPercentMismatches) {
  const std::string data = path("world");
  synth::write_pairs_world(synth::make_pairs_world(cli::demo_world(false)), data);  // the demo's CPU world, seed 0
  const std::vector<std::string> common = {
      "--data_path", data, "--data_name", "synth_precomp", "--noise_ratio", "0.6", "--noise_mode", "image",
      "--seed", "0", "--batch_size", "32", "--embed_size", "64", "--word_dim", "32", "--sim_dim", "32",
      "--module_name", "SAF", "--dropout", "0.1", "--learning_rate", "5e-3", "--lr_update", "100",
      "--val_subset", "sgraf", "--progress", "none", "--no_plots"};
  std::map<std::string, double> rsum;
  for (const std::string method : {"crcl", "triplet"}) {
    std::vector<std::string> args = {"train", "--method", method, "--run_dir", path(method)};
    if (method == "crcl") {
      args.insert(args.end(), {"--warmup_epoch", "4", "--schedules", "5"});
    } else {
      args.insert(args.end(), {"--num_epochs", "9"});
    }
    args.insert(args.end(), common.begin(), common.end());
    const test::CliResult r = test::run_cli(args);
    ASSERT_EQ(r.code, kExitOk) << method << ":\n" << r.err;
    for (const run::MetricRecord& m : run::read_metrics(path(method) + "/metrics.jsonl"))
      if (m.kind == "test") rsum[method] = m.get("test_rsum");
  }
  std::cout << "[ crcl behaviour ] test rSum: crcl " << rsum["crcl"] << ", triplet " << rsum["triplet"] << "\n";
  EXPECT_GT(rsum["crcl"], 350);
  EXPECT_GT(rsum["crcl"], rsum["triplet"] + 250);
}

}  // namespace
}  // namespace rematch::cli
