// The behaviour the training suite exists for, checked on synthetic benchmarks with 60 % of the training images
// mismatched. Training trajectories depend on the CPU (OpenBLAS picks its kernels at run time, -march=native
// changes vectorisation), so a run on another machine is, in effect, another seed: every claim here is made
// on an experiment whose margin is far wider than the spread between seeds, or on a mean over seeds.
//
// 1. The demo (`rematch demo`, the README's first command, at its CPU size): RCL and L2RM reach a higher test
//    rSum than the VSE++ triplet baseline trained with the same epochs and seed. The margin is hundreds of rSum
//    points (triplet stays near chance at 60 % mismatches: 26–33 measured, rcl and l2rm 500–518).
// 2. L2RM's Beta-mixture split right after warm-up keeps a clean set far purer than the data (0.4 of the pairs
//    are matched): mean clean-set precision at least 0.9 with the paper's split loss (hardest negative,
//    `--split_loss hardest`) and at least 0.8 with the code's (mean over negatives), over 4 seeds × warm-ups of
//    2, 3 and 4 epochs. One split alone is not enough: the mixture fit now and then draws its threshold late and
//    takes a wider clean set (about 1 split in 6 measured ~0.1 below the others), so a single split sat 0.03
//    from 0.9 on one machine and just below it on another.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "cli_runner.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/methods/make_method.h"
#include "train/methods/l2rm/l2rm_options.h"
#include "train/run/run_folder.h"
#include "train/run/training_state.h"
#include "train/synth/pairs_world.h"

namespace rematch::cli {
namespace {

class BehaviourTest : public rematch::test::TempDirTest {};

TEST_F(BehaviourTest, RclAndL2rmBeatTripletUnderSixtyPercentMismatches) {
  const std::string out = path("demo");
  const test::CliResult demo = test::run_cli({"demo", "--out", out, "--progress", "none", "--seed", "0"});
  ASSERT_EQ(demo.code, kExitOk) << demo.err;
  std::cout << demo.out;

  std::map<std::string, double> rsum;
  for (const std::string method : {"triplet", "rcl", "l2rm"})
    for (const run::MetricRecord& r : run::read_metrics(out + "/" + method + "/metrics.jsonl"))
      if (r.kind == "test") rsum[method] = r.get("test_rsum");
  std::cout << "test rSum: triplet " << rsum["triplet"] << ", rcl " << rsum["rcl"] << ", l2rm " << rsum["l2rm"] << "\n";
  // rSum is at most 600; chance level on 100 test images is about 6 (R@1+5+10 of 1 %, 5 %, 10 % both ways).
  EXPECT_GT(rsum["rcl"], rsum["triplet"] + 100);
  EXPECT_GT(rsum["l2rm"], rsum["triplet"] + 100);
}

// The demo's CPU model (train/cli/demo_command.cpp) on a world with twice its concepts and attributes: with
// 8 objects × 4 attributes, a shuffled caption ("a red dog") often still describes the image it was moved to
// (an image holds 2–5 of the 32 object–attribute instances), and such "mismatched" pairs are true pairs any
// good model keeps, which caps the measurable precision near 0.9. With 16 × 8 such accidents are rare.
synth::PairsWorldConfig split_world(uint64_t seed) {
  synth::PairsWorldConfig w;
  w.train_images = 1000;
  w.dev_images = 100;
  w.test_images = 100;
  w.regions = 6;
  w.feature_dim = 32;
  w.concepts = 16;
  w.attributes = 8;
  w.twin_fraction = 0;
  w.feature_noise = 0.2;
  w.seed = seed;
  return w;
}

train::TrainConfig split_config(const std::string& data, uint64_t seed, int64_t warmup, const std::string& loss) {
  train::TrainConfig c;
  c.method = "l2rm";
  c.seed = seed;
  c.data_path = data;
  c.data_name = "synth_precomp";
  c.noise_ratio = 0.6;
  c.batch_size = 32;
  train::L2rmOptions& o = c.options<train::L2rmOptions>();
  o.embed_size = 64;
  o.word_dim = 32;
  o.sim_dim = 32;
  o.module_name = models::SimilarityModule::SAF;
  o.dropout = 0.1;
  c.learning_rate = 5e-3;
  c.lr_update = 100;
  o.reg = 0.05;
  c.warmup_epoch = warmup;
  c.num_epochs = 1;
  o.split_loss = loss == "hardest" ? losses::SplitLoss::Hardest : losses::SplitLoss::Mean;
  c.progress = run::ProgressStyle::None;
  train::resolve_defaults(c);
  return c;
}

struct SplitPrecision {
  int64_t warmup = 0;
  double hardest = 0, mean = 0;
};

// The clean-set precision of the first split of runs with `first`..`last` warm-up epochs, from one warm-up run:
// the warm-up's steps do not depend on its length, so after each epoch its state goes into a fresh method whose
// warm-up ends there, and that method's first begin_epoch makes the split exactly as such a run would (checked
// against `rematch train` to the last digit). The trainer validates after every epoch; so does this loop.
std::vector<SplitPrecision> split_precisions(const std::string& data, uint64_t seed, int64_t first, int64_t last) {
  std::ostringstream log;
  std::unique_ptr<train::Method> warm = train::make_method(split_config(data, seed, last + 1, "hardest"), log);
  std::vector<SplitPrecision> out;
  for (int64_t e = 0; e < last; ++e) {
    const int64_t steps = warm->begin_epoch(e).steps;
    for (int64_t s = 0; s < steps; ++s) warm->train_step(e, s);
    warm->end_epoch(e);
    warm->validate();
    if (e + 1 < first) continue;
    train::TrainingState state;
    warm->save_state(state);
    SplitPrecision p{e + 1};
    for (const std::string loss : {"hardest", "mean"}) {
      std::unique_ptr<train::Method> split = train::make_method(split_config(data, seed, e + 1, loss), log);
      split->load_state(state);
      (loss == "hardest" ? p.hardest : p.mean) = split->begin_epoch(e + 1).stats.at("clean_precision");
    }
    out.push_back(p);
  }
  return out;
}

TEST_F(BehaviourTest, L2rmSplitAfterWarmupKeepsAPureCleanSet) {
  double hardest = 0, mean = 0;
  int64_t n = 0;
  for (const uint64_t seed : {0, 1, 2, 3}) {
    const std::string data = path("world" + std::to_string(seed));
    synth::write_pairs_world(synth::make_pairs_world(split_world(seed)), data);
    for (const SplitPrecision& p : split_precisions(data, seed, 2, 4)) {
      std::printf("[ l2rm split ] seed %llu, %lld warm-up epochs: clean-set precision %.4f (hardest), %.4f (mean)\n",
                  static_cast<unsigned long long>(seed), static_cast<long long>(p.warmup), p.hardest, p.mean);
      hardest += p.hardest;
      mean += p.mean;
      ++n;
    }
  }
  hardest /= static_cast<double>(n);
  mean /= static_cast<double>(n);
  std::printf("[ l2rm split ] mean over %lld splits: %.4f (hardest-negative split loss), %.4f (mean)\n",
              static_cast<long long>(n), hardest, mean);
  EXPECT_GE(hardest, 0.9);
  EXPECT_GE(mean, 0.8);
}

}  // namespace
}  // namespace rematch::cli
