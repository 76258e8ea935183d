// DECL's behaviour on the synthetic benchmark with 60 % of the training images mismatched (the demo's CPU world
// and model, train/cli/demo_command.cpp: 500 training images × 5 captions, 100 dev and test images, SAF with
// embed 64, batch 32, lr 5e-3), for 3 epochs: DECL (2 warm-up epochs, the F30K preset's at 0.6, then a main
// epoch with the evidential split) ends far above the VSE++ hardest-negative triplet trained on the same data,
// model, seed and epochs, which the mismatches hold near chance level (rSum ≈ 6 on 100 test images).
//
// Measured test rSum (DECL vs triplet, the same world and flags through `rematch train`), seeds 0, 1, 2 with the
// CPU's own OpenBLAS kernels and seed 0 with OPENBLAS_CORETYPE=Haswell, Prescott and SkylakeX (a run on another
// machine is, in effect, another seed; behaviour_test.cpp):
//   seed 0: 478.4 vs 38.8 (+439.6)   seed 1: 468.4 vs 34.8 (+433.6)   seed 2: 442.6 vs 36.8 (+405.8)
//   seed 0 Haswell: 437.2 vs 29.8 (+407.4)   Prescott: 443.4 vs 27.4 (+416.0)   SkylakeX: 464.6 vs 33.6 (+431.0)
// The margin asked, kMargin = 250, is 155 below the smallest difference measured. About 50 s on 2 cores.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "test_util.h"
#include "train/cli/demo_command.h"
#include "train/methods/decl/decl_options.h"
#include "train/methods/make_method.h"
#include "train/run/run_folder.h"
#include "train/synth/pairs_world.h"

namespace rematch::train {
namespace {

// DECL's test rSum must exceed triplet's by this much (measured differences 405.8 to 439.6: the file's comment).
constexpr double kMargin = 250;

class DeclBehaviourTest : public test::TempDirTest {
 protected:
  TrainConfig config(const std::string& method, const std::string& data, uint64_t seed) {
    TrainConfig c;
    c.method = method;
    c.seed = seed;
    c.data_path = data;
    c.data_name = "synth_precomp";
    c.noise_ratio = 0.6;
    c.batch_size = 32;
    for (PairsOptions* p : {&c.options<PairsOptions>(), static_cast<PairsOptions*>(&c.options<DeclOptions>())}) {
      p->embed_size = 64;
      p->word_dim = 32;
      p->sim_dim = 32;
      p->module_name = models::SimilarityModule::SAF;
      p->dropout = 0.1;
    }
    c.learning_rate = 5e-3;
    c.lr_update = 100;
    c.warmup_epoch = method == "decl" ? 2 : 0;
    c.num_epochs = method == "decl" ? 1 : 3;
    c.val_subset = data::ValSubset::sgraf;
    c.run_dir = path(method + "_" + std::to_string(seed));
    c.progress = run::ProgressStyle::None;
    c.plots = false;
    resolve_defaults(c);
    return c;
  }

  double test_rsum(const TrainConfig& c) {
    std::ostringstream log;
    const NewRun r = train_new_run(c, log);
    for (const run::MetricRecord& m : run::read_metrics(r.run_dir + "/metrics.jsonl"))
      if (m.kind == "test") return m.get("test_rsum");
    ADD_FAILURE() << c.method << ": no test record\n" << log.str();
    return 0;
  }
};

TEST_F(DeclBehaviourTest, BeatsTripletUnderSixtyPercentMismatches) {
  const std::string data = path("world");
  synth::write_pairs_world(synth::make_pairs_world(cli::demo_world(false)), data);  // the demo's CPU world, seed 0
  const double decl = test_rsum(config("decl", data, 0));
  const double triplet = test_rsum(config("triplet", data, 0));
  std::printf("[ decl behaviour ] test rSum at 60%% mismatches: decl %.1f, triplet %.1f (difference %.1f)\n", decl,
              triplet, decl - triplet);
  EXPECT_GT(decl, triplet + kMargin);
}

}  // namespace
}  // namespace rematch::train
