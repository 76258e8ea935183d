// RCSL's training step of each stage against a PyTorch transcription of the official SVSE.train_emb
// (tests/reference/rcsl_step_reference.py, fixtures tests/fixtures/golden_steps/rcsl_{learning,mining}/), run by
// RcslMethod::train_step itself in float64 on a VSE model of embed 4 (docs/methods/rcsl.md §3.2–§3.5):
//   learning  L = L_trl (paired block) + L_reg, clip at 2, AdamW (lr 5e-4, weight decay 0.01);
//   mining    the same plus L_rcm (τ = 0.03) on the bank's mined images and captions (view 1, after view 0).
// Pinned randomness: --no_augment (the augmentations are the step's draws), text dropout 0 (RcslOptions, no
// flag); the batch (5 paired captions first, then 3 unpaired), the labels and the memory bank are given through
// the state. AdamW starts from moments of 4 earlier steps. Every parameter and BatchNorm buffer after the step
// within 1e-10 (observed: the printed maximum).
#include <iostream>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/rcsl/rcsl_method.h"

namespace rematch::train {
namespace {

class RcslGoldenStepTest : public test::TempDirTest {
 protected:
  void run_stage(const std::string& stage) {
    const std::string fixture = "rcsl_" + stage;
    TrainConfig c = test::golden_precomp_config("rcsl", fixture, path("data"));
    RcslOptions& o = c.options<RcslOptions>();
    o.paired_length = 8;  // the semi-paired shuffle keeps every image: the labels come from the state
    c.batch_size = 8;
    c.learning_rate = 5e-4;
    o.weight_decay = 0.01;
    c.grad_clip = 2.0;
    o.tau = 0.03;
    o.margin = 0.2;
    c.num_epochs = 2;
    o.mine_epoch = 1;
    o.lr_milestones = {15, 30, 45};
    o.unpaired_keep = 1;
    o.no_augment = true;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    o.dtype = DType::Float64;
    o.text_dropout = 0;
    std::ostringstream log;
    RcslMethod method(c, o, /*noisy=*/false, load_pairs_data(c, true, log), log);
    ASSERT_EQ(method.model().config().vocab_size, 13) << "12 words and RCSL's <mask>";

    const bool mining = stage == "mining";
    TrainingState s;
    method.save_state(s);
    test::put_golden_module(s, "model.", method.model(), fixture, "before.");
    test::put_golden_adam(s, "optim.", method.model(), "AdamW", 5e-4, 4, fixture, "adam.");
    s.put_entry("rcsl.stage", stage);
    s.put_int("rcsl.epoch", mining ? 1 : 0);
    s.put_int_vector("rcsl.labels", {1, 1, 1, 1, 1, 0, 0, 0});
    s.put_int_vector("rcsl.plan.captions", {0, 1, 2, 3, 4, 5, 6, 7});
    s.put_int_vector("rcsl.plan.sizes", {8});
    s.put_entry("rcsl.epoch_info", R"({"phase": ")" + stage + R"(", "steps": 1, "stats": {}})");
    if (mining) {  // the CAPTION_TO_IMAGE / IMAGE_TO_CAPTION of the reference
      s.put_int_vector("rcsl.bank.caption_to_image", {0, 1, 2, 3, 4, 1, 7, 2});
      s.put_int_vector("rcsl.bank.image_to_caption", {0, 1, 2, 3, 4, 6, 3, 0});
      s.put_double_vector("rcsl.bank.caption_score", std::vector<double>(8, 1.0));
      s.put_double_vector("rcsl.bank.image_score", std::vector<double>(8, 1.0));
    }
    method.load_state(s);
    ASSERT_DOUBLE_EQ(method.learning_rate(), 5e-4);

    EXPECT_GT(test::golden_step_size(method.model(), fixture, "before.", "after."), 1e-5);
    const StepResult r = method.train_step(mining ? 1 : 0, 0);
    const std::vector<double> losses = test::golden(fixture, "losses").to_vector<double>();
    EXPECT_NEAR(r.parts.at("trl"), losses[0], 1e-10);
    EXPECT_NEAR(r.parts.at("reg"), losses[1], 1e-10);
    if (mining) EXPECT_NEAR(r.parts.at("rcm"), losses[2], 1e-10);
    EXPECT_EQ(r.parts.count("rcm"), mining ? 1u : 0u);
    const double worst = test::expect_golden_module(method.model(), fixture, "after.");
    std::cout << "rcsl " << stage << " golden step: largest difference over every parameter and buffer " << worst
              << "\n";
  }
};

TEST_F(RcslGoldenStepTest, LearningStepMatchesTheReference) { run_stage("learning"); }
TEST_F(RcslGoldenStepTest, MiningStepMatchesTheReference) { run_stage("mining"); }

}  // namespace
}  // namespace rematch::train
