// DSCMR's training step against the OFFICIAL code itself (tests/reference/dscmr_step_official.py runs
// penghu-cs/DSCMR `train_model.py: train_model` and its `calc_loss` on `model.py: IDCM_NN` on the CPU in float64;
// fixture tests/fixtures/golden_steps/dscmr/), run by DscmrMethod::train_step itself in float64
// (DscmrOptions::dtype): 8 pairs (one batch in file order, as the official unshuffled loader gives them), K = 3,
// hidden width 7, common space 4, 3 of 8 labels flipped (one label per pair, read from a [2, N] noise file),
// alpha = 1e-3, beta = 0.1 (main.py), Adam lr 1e-4 with betas (0.5, 0.999) from moments of 4 earlier steps.
// Every parameter, both Adam moments of every parameter and the three loss terms within 1e-10. The controls: a
// nudged alpha, beta or learning rate moves the result beyond the tolerance (StepDependsOnEveryHyperParameter).
#include <cmath>
#include <iostream>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/dscmr/dscmr_method.h"

namespace rematch::train {
namespace {

const std::string kMethod = "dscmr";

class DscmrGoldenStepTest : public test::TempDirTest {
 protected:
  TrainConfig options() {
    test::write_golden_labeled(kMethod, path("data"));
    save_npy(path("noisy.npy"), test::golden(kMethod, "noisy"));
    TrainConfig c;
    c.method = "dscmr";
    c.data_path = path("data");
    c.noise_file = path("noisy.npy");
    c.batch_size = 8;
    c.num_epochs = 1;
    c.warmup_epoch = 0;
    c.learning_rate = 1e-4;
    c.lr_update = 0;
    c.grad_clip = 0;
    c.eval_batch = 1000;
    DscmrOptions& o = c.options<DscmrOptions>();
    o.hidden_dim = 7;
    o.common_dim = 4;
    o.alpha = 1e-3;
    o.beta = 0.1;
    o.dtype = DType::Float64;
    return c;
  }

  std::unique_ptr<DscmrMethod> step(const TrainConfig& c, StepResult& result) {
    auto method =
        std::make_unique<DscmrMethod>(c, c.options<DscmrOptions>(), data::load_labeled(c.data_path, -1), log_);
    const std::vector<int64_t> noisy = test::golden(kMethod, "noisy").to_vector<int64_t>();
    EXPECT_EQ(method->noisy_labels().image_labels, std::vector<int64_t>(noisy.begin(), noisy.begin() + 8));
    TrainingState s;
    method->save_state(s);
    test::put_golden_module(s, "model.", method->model(), kMethod, "before.");
    test::put_golden_adam(s, "optim.", method->model(), "Adam", c.learning_rate, 4, kMethod, "adam.");
    method->load_state(s);
    method->begin_epoch(0);
    result = method->train_step(0, 0);
    return method;
  }

  double compare(DscmrMethod& method, bool expect) {
    double worst = 0;
    const auto diff = [&](const Tensor& got, const std::string& file) {
      const Tensor want = test::golden(kMethod, file);
      if (expect) return test::expect_golden_tensor(got, want, file);
      const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
      double d = 0;
      for (size_t i = 0; i < g.size(); ++i) d = std::max(d, std::fabs(g[i] - w[i]));
      return d;
    };
    TrainingState after;
    method.save_state(after);
    int64_t i = 0;
    for (const auto& [name, p] : method.model().named_parameters()) {
      worst = std::max(worst, diff(p, "after." + name));
      for (const char* moment : {"exp_avg", "exp_avg_sq"})
        worst = std::max(worst, diff(after.get_tensor("optim.state." + std::to_string(i) + "." + moment),
                                     "adam_after." + name + "." + moment));
      ++i;
    }
    return worst;
  }

  std::ostringstream log_;
};

TEST_F(DscmrGoldenStepTest, StepMatchesTheOfficialCode) {
  StepResult r;
  auto method = step(options(), r);
  const std::vector<double> losses = test::golden(kMethod, "losses").to_vector<double>();
  EXPECT_NEAR(r.parts.at("label_space"), losses[0], 1e-10);
  EXPECT_NEAR(r.parts.at("common_space"), losses[1], 1e-10);
  EXPECT_NEAR(r.parts.at("invariance"), losses[2], 1e-10);
  EXPECT_NEAR(r.loss, losses[3], 1e-10);
  EXPECT_EQ(r.pairs, 8);
  EXPECT_GT(test::golden_step_size(method->model(), kMethod, "before.", "after."), 1e-5);
  const double worst = compare(*method, true);
  std::cout << "dscmr golden step: largest difference over every parameter and Adam moment " << worst << "\n";
}

TEST_F(DscmrGoldenStepTest, StepDependsOnEveryHyperParameter) {
  const std::vector<std::pair<std::string, std::function<void(TrainConfig&)>>> nudges = {
      {"alpha 1e-3 -> 1.1e-3", [](TrainConfig& c) { c.options<DscmrOptions>().alpha = 1.1e-3; }},
      {"beta 0.1 -> 0.11", [](TrainConfig& c) { c.options<DscmrOptions>().beta = 0.11; }},
      {"learning rate 1e-4 -> 1.01e-4", [](TrainConfig& c) { c.learning_rate = 1.01e-4; }},
  };
  for (const auto& [what, nudge] : nudges) {
    TrainConfig c = options();
    nudge(c);
    StepResult r;
    auto method = step(c, r);
    const double worst = compare(*method, false);
    EXPECT_GT(worst, 1e-8) << what << " leaves the step within " << worst;
    std::cout << "dscmr control " << what << ": largest difference " << worst << "\n";
  }
}

}  // namespace
}  // namespace rematch::train
