// The class-labelled baselines at 50 % symmetric label noise on the synthetic labelled benchmark (`rematch synth
// --kind labeled`, 10 classes, 2,000 training pairs), trained exactly as `rematch demo --labeled` trains them
// (cli::labeled_demo_runs: MLPs 256 → 64, batches of 100, Adam 1e-3, 20 epochs, test mAP@all at the best
// validated epoch): a cross-entropy baseline (mrl --label_loss ce --beta 1), mrl (β 0.7), dscmr and uotrcl.
// Measured (test mAP, mean of both directions; seeds 0, 1, 2, 3 of data, noise and training; OpenBLAS
// Haswell):
//   ce      0.906  0.896  0.874  0.897
//   mrl     0.944  0.933  0.920  0.940     mrl − ce ≥ 0.037, uotrcl − mrl ∈ [0.002, 0.011]
//   dscmr   0.890  0.875  0.869  0.909     dscmr − ce ∈ [−0.021, +0.013] (DSCMR has no defence against noise)
//   uotrcl  0.950  0.935  0.931  0.947     uotrcl − ce ≥ 0.039
// The test runs seeds 0 and 1 and asserts what held with room on all four: MRL's robust clustering beats
// cross-entropy by ≥ 0.02; UOT-RCL beats it by ≥ 0.025 and MRL stays below or within 0.01 of UOT-RCL (UOT-RCL's
// Tables I–II order, where MRL is the strongest baseline); DSCMR stays within 0.04 of cross-entropy and ≥ 0.02
// below MRL and UOT-RCL.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <sstream>

#include "test_util.h"
#include "train/cli/labeled_demo.h"
#include "train/methods/make_method.h"

namespace rematch::train {
namespace {

class LabeledBaselinesBehaviour : public test::TempDirTest, public ::testing::WithParamInterface<uint64_t> {};

TEST_P(LabeledBaselinesBehaviour, MrlBeatsCrossEntropyAndUotrclLeadsAtHalfTheLabelsWrong) {
  const uint64_t seed = GetParam();
  cli::LabeledDemoOptions o;
  o.out = path("demo");
  o.seed = seed;
  o.progress = "none";
  const std::string data =
      synth::write_labeled_world(synth::make_labeled_world(cli::labeled_demo_world(seed)), path("data"));
  std::map<std::string, double> map;
  std::ostringstream log;
  for (cli::LabeledDemoRun& r : cli::labeled_demo_runs(o, data)) {
    r.config.plots = false;  // the numbers only
    const NewRun n = train_new_run(r.config, log);
    map[r.row] = n.outcome.test.metrics.at("map_avg");
  }
  std::cout << "[ labelled baselines ] seed " << seed << ", 50% symmetric label noise, test mAP: ce " << map["ce"]
            << ", mrl " << map["mrl"] << ", dscmr " << map["dscmr"] << ", uotrcl " << map["uotrcl"] << "\n";
  EXPECT_GE(map["mrl"] - map["ce"], 0.02) << "MRL's clustering loss beats cross-entropy";
  EXPECT_GE(map["uotrcl"] - map["ce"], 0.025) << "UOT-RCL beats cross-entropy";
  EXPECT_LE(map["mrl"], map["uotrcl"] + 0.01) << "MRL is below or near UOT-RCL";
  EXPECT_LE(std::abs(map["dscmr"] - map["ce"]), 0.04) << "DSCMR is about as good as cross-entropy";
  EXPECT_GE(map["mrl"] - map["dscmr"], 0.02);
  EXPECT_GE(map["uotrcl"] - map["dscmr"], 0.02);
}

INSTANTIATE_TEST_SUITE_P(Seeds, LabeledBaselinesBehaviour, ::testing::Values(0u, 1u));

}  // namespace
}  // namespace rematch::train
