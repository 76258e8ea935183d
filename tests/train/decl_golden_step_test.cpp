// DECL's training steps (docs/methods/decl.md §2-§5) against the OFFICIAL DECL code itself, run by
// tests/reference/decl_step_official.py on the extracted QinYang79/DECL repository (model/DECL.py, model/SGRAF.py,
// train.py: get_correspondence; its only changes, listed there: `.cuda()` removed, get_correspondence cut out of
// train.py, dropout p = 0, float64), fixtures tests/fixtures/golden_steps/decl/ (SGR) and decl_saf/ (SAF):
//   1. a warm-up step (DECL.warmup_batch: y = I, RDH over every pair, hardness 6 at step 1),
//   2. the epoch's evidential split in eval mode (get_correspondence) on the warmed-up weights,
//   3. a main step with that split (DECL.train_batch: y_ii = 0 for the noisy pairs, RDH over the clean ones,
//      hardness 5 at step 2),
// each run by DeclMethod itself (train_step, begin_epoch) in float64 on an 8-pair model (embed 4, sim 4, word 3,
// 36 regions as SGRAF.py's VisualSA hard-codes). After each step every parameter, BatchNorm buffer and Adam
// moment, and the loss, within 1e-10; the split exactly, its mean uncertainties within 1e-10.
// Pinned randomness: dropout 0 (the official masks cannot be reproduced: its largest deterministic piece); the
// training set is the one batch, its order fixed by distinct caption lengths.
#include <iostream>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/decl/decl_method.h"

namespace rematch::train {
namespace {

class DeclGoldenStepTest : public test::TempDirTest {
 protected:
  // Every Adam moment against the fixture's `prefix`<name>.exp_avg/.exp_avg_sq; the largest difference.
  static double expect_moments(DeclMethod& method, const TrainingState& s, const std::string& fixture,
                               const std::string& prefix) {
    double worst = 0;
    int64_t i = 0;
    for (const auto& [name, p] : method.model().named_parameters()) {
      for (const char* m : {"exp_avg", "exp_avg_sq"})
        worst = std::max(worst, test::expect_golden_tensor(
                                    s.get_tensor("optim.state." + std::to_string(i) + "." + m),
                                    test::golden(fixture, prefix + name + "." + m), prefix + name + "." + m));
      ++i;
    }
    return worst;
  }

  void run(const std::string& fixture, models::SimilarityModule module) {
    TrainConfig c = test::golden_precomp_config("decl", fixture, path("data"));
    DeclOptions& o = c.options<DeclOptions>();
    o.module_name = module;
    o.embed_size = 4;
    o.word_dim = 3;
    o.sim_dim = 4;
    o.sgr_step = 3;
    o.dropout = 0;
    o.tau = 0.1;
    o.margin = 0.2;
    o.lambda1 = 0.8;
    o.lambda2 = 0.1;
    o.eta = 1.5;
    o.mu = 2;
    o.dtype = DType::Float64;
    c.batch_size = 8;
    c.learning_rate = 2e-4;
    c.grad_clip = 2.0;
    c.warmup_epoch = 1;
    c.num_epochs = 1;
    c.lr_update = 20;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    std::ostringstream log;
    DeclMethod method(c, o, load_pairs_data(c, false, log), log);
    ASSERT_EQ(method.model().config().num_regions, 36);

    TrainingState s;
    method.save_state(s);
    test::put_golden_module(s, "model.", method.model(), fixture, "before.");
    test::put_golden_adam(s, "optim.", method.model(), "Adam", 2e-4, 4, fixture, "adam.");
    s.put_int("epoch", 0);
    s.put_int("decl.step", 0);
    method.load_state(s);
    ASSERT_EQ(method.current_epoch().steps, 1);
    ASSERT_EQ(method.current_epoch().phase, "warmup");

    // The official steps move the parameters far beyond the tolerance (Adam's steps are ≈ lr).
    EXPECT_GT(test::golden_step_size(method.model(), fixture, "before.", "after_warmup."), 1e-5);
    EXPECT_GT(test::golden_step_size(method.model(), fixture, "after_warmup.", "after_main."), 1e-5);
    // The hardness the official steps logged (H_n): 6 at step 1, 5 at step 2.
    const std::vector<int64_t> hardness = test::golden(fixture, "hardness").to_vector<int64_t>();
    EXPECT_EQ(decl::hardness(8, 1.5, 2, 1, 8), hardness[0]);
    EXPECT_EQ(decl::hardness(8, 1.5, 2, 2, 8), hardness[1]);

    // 1. the warm-up step.
    const StepResult warm = method.train_step(0, 0);
    EXPECT_NEAR(warm.loss, test::golden(fixture, "warmup_loss").item<double>(), 1e-10);
    double worst = test::expect_golden_module(method.model(), fixture, "after_warmup.");
    TrainingState after_warmup;
    method.save_state(after_warmup);
    worst = std::max(worst, expect_moments(method, after_warmup, fixture, "adam_after_warmup."));
    EXPECT_EQ(method.steps_taken(), 1);
    method.end_epoch(0);

    // 2. the split of main epoch 1 (the main loop's epoch 0).
    const EpochInfo info = method.begin_epoch(1);
    EXPECT_EQ(info.phase, "main");
    ASSERT_EQ(info.steps, 1);
    const std::vector<int64_t> preds = test::golden(fixture, "preds").to_vector<int64_t>();
    ASSERT_EQ(method.clean().size(), preds.size());
    for (size_t i = 0; i < preds.size(); ++i) EXPECT_EQ(method.clean()[i], preds[i]) << "caption " << i;
    const std::vector<double> u = test::golden(fixture, "uncertainty").to_vector<double>();
    double u_clean = 0, u_noisy = 0, n_clean = 0;
    for (size_t i = 0; i < u.size(); ++i) {
      (preds[i] ? u_clean : u_noisy) += u[i];
      n_clean += static_cast<double>(preds[i]);
    }
    EXPECT_NEAR(info.stats.at("clean_uncertainty"), u_clean / n_clean, 1e-10);
    EXPECT_NEAR(info.stats.at("noisy_uncertainty"), u_noisy / (static_cast<double>(u.size()) - n_clean), 1e-10);

    // 3. the main step with that split.
    const StepResult main = method.train_step(1, 0);
    EXPECT_NEAR(main.loss, test::golden(fixture, "main_loss").item<double>(), 1e-10);
    worst = std::max(worst, test::expect_golden_module(method.model(), fixture, "after_main."));
    TrainingState after_main;
    method.save_state(after_main);
    worst = std::max(worst, expect_moments(method, after_main, fixture, "adam_after_main."));
    EXPECT_EQ(method.steps_taken(), 2);
    std::cout << fixture << " golden steps (warm-up, split, main) against the official code: largest difference "
              << "over every parameter, buffer and Adam moment " << worst << "; warm-up loss " << warm.loss
              << " (official " << test::golden(fixture, "warmup_loss").item<double>() << "), main loss " << main.loss
              << " (official " << test::golden(fixture, "main_loss").item<double>() << ")\n";
  }
};

TEST_F(DeclGoldenStepTest, SgrStepsMatchTheOfficialCode) { run("decl", models::SimilarityModule::SGR); }

TEST_F(DeclGoldenStepTest, SafStepsMatchTheOfficialCode) { run("decl_saf", models::SimilarityModule::SAF); }

}  // namespace
}  // namespace rematch::train
