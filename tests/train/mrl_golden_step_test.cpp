// MRL's training step against the OFFICIAL code itself (tests/reference/mrl_step_official.py runs penghu-cs/MRL
// `main_noisy.py: main` — its `train` closure, `cross_modal_contrastive_ctriterion`, `src/utils.py:
// MeanClusteringError`, `nets/ImageNet.py`, `nets/TextNet.py` at hidden width 7 — on the CPU in float64; fixture
// tests/fixtures/golden_steps/mrl/), run by MrlMethod::train_step itself in float64 (MrlOptions::dtype):
// 8 pairs (the whole training set, one batch), K = 3, L = 4, per-modality noisy labels (3 image and 2 text labels
// flipped) read from a [2, N] noise file, β = 0.7, τ = 0.5 (both the MCE softmax and the contrastive loss),
// Adam lr 1e-3 with betas (0.5, 0.999) from moments of 4 earlier steps, C's columns renormalised after the
// update (the official renormalises them at the top of the next batch; the fixture holds C as that batch sees
// it). Every parameter, both Adam moments of every parameter and the loss terms within 1e-10, for --label_loss
// mce (the method) and ce (the official --loss CE). The controls: a nudged β, τ, learning rate or Adam β₁ moves
// the result beyond the tolerance (StepDependsOnEveryHyperParameter).
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/mrl/mrl_method.h"

namespace rematch::train {
namespace {

const std::string kMethod = "mrl";

class MrlGoldenStepTest : public test::TempDirTest {
 protected:
  TrainConfig options(MrlLabelLoss loss) {
    test::write_golden_labeled(kMethod, path("data"));
    save_npy(path("noisy.npy"), test::golden(kMethod, "noisy"));
    TrainConfig c;
    c.method = "mrl";
    c.data_path = path("data");
    c.noise_file = path("noisy.npy");
    c.batch_size = 8;
    c.num_epochs = 2;
    c.warmup_epoch = 0;
    c.learning_rate = 1e-3;
    c.lr_update = 0;
    c.grad_clip = 0;
    c.eval_batch = 1000;
    MrlOptions& o = c.options<MrlOptions>();
    o.hidden_dim = 7;
    o.output_dim = 4;
    o.beta = 0.7;
    o.tau = 0.5;
    o.label_loss = loss;
    o.ls = MrlSchedule::Cos;
    o.dtype = DType::Float64;
    return c;
  }

  // One step of epoch 0 from the fixture's state.
  std::unique_ptr<MrlMethod> step(const TrainConfig& c, StepResult& result) {
    auto method = std::make_unique<MrlMethod>(c, c.options<MrlOptions>(), data::load_labeled(c.data_path, -1), log_);
    const std::vector<int64_t> noisy = test::golden(kMethod, "noisy").to_vector<int64_t>();
    EXPECT_EQ(method->noisy_labels().image_labels, std::vector<int64_t>(noisy.begin(), noisy.begin() + 8));
    EXPECT_EQ(method->noisy_labels().text_labels, std::vector<int64_t>(noisy.begin() + 8, noisy.end()));
    TrainingState s;
    method->save_state(s);
    test::put_golden_module(s, "model.", method->model(), kMethod, "before.");
    test::put_golden_adam(s, "optim.", method->model(), "Adam", c.learning_rate, 4, kMethod, "adam.");
    method->load_state(s);
    method->begin_epoch(0);
    EXPECT_DOUBLE_EQ(method->learning_rate(), c.learning_rate) << "epoch 0 trains at the base rate";
    result = method->train_step(0, 0);
    return method;
  }

  // The largest |got − want| over every parameter and Adam moment (`expect`: also EXPECT each within 1e-10).
  double compare(MrlMethod& method, const std::string& prefix, bool expect) {
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
      worst = std::max(worst, diff(p, prefix + "after." + name));
      for (const char* moment : {"exp_avg", "exp_avg_sq"})
        worst = std::max(worst, diff(after.get_tensor("optim.state." + std::to_string(i) + "." + moment),
                                     prefix + "adam_after." + name + "." + moment));
      ++i;
    }
    return worst;
  }

  std::ostringstream log_;
};

TEST_F(MrlGoldenStepTest, MceStepMatchesTheOfficialCode) {
  StepResult r;
  auto method = step(options(MrlLabelLoss::Mce), r);
  const std::vector<double> losses = test::golden(kMethod, "losses").to_vector<double>();
  EXPECT_NEAR(r.parts.at("mce_img"), losses[0], 1e-10);
  EXPECT_NEAR(r.parts.at("mce_txt"), losses[1], 1e-10);
  EXPECT_NEAR(r.parts.at("contrastive"), losses[2], 1e-10);
  EXPECT_NEAR(r.loss, losses[3], 1e-10);
  EXPECT_EQ(r.pairs, 8);
  // The official step moves the parameters far beyond the tolerance (Adam's steps are ≈ lr).
  EXPECT_GT(test::golden_step_size(method->model(), kMethod, "before.", "after."), 1e-4);
  const double worst = compare(*method, "", true);
  std::cout << "mrl golden step (MCE): largest difference over every parameter and Adam moment " << worst << "\n";
}

TEST_F(MrlGoldenStepTest, CeStepMatchesTheOfficialCode) {
  StepResult r;
  auto method = step(options(MrlLabelLoss::Ce), r);
  EXPECT_NEAR(r.loss, test::golden(kMethod, "ce.losses").to_vector<double>()[0], 1e-10);
  const double worst = compare(*method, "ce.", true);
  std::cout << "mrl golden step (CE): largest difference over every parameter and Adam moment " << worst << "\n";
}

// The controls: each hyper-parameter the step reads, nudged, moves the result beyond the tolerance.
TEST_F(MrlGoldenStepTest, StepDependsOnEveryHyperParameter) {
  const std::vector<std::pair<std::string, std::function<void(TrainConfig&)>>> nudges = {
      {"beta 0.7 -> 0.69", [](TrainConfig& c) { c.options<MrlOptions>().beta = 0.69; }},
      {"tau 0.5 -> 0.51", [](TrainConfig& c) { c.options<MrlOptions>().tau = 0.51; }},
      {"learning rate 1e-3 -> 1.01e-3", [](TrainConfig& c) { c.learning_rate = 1.01e-3; }},
      {"label loss mce -> ce", [](TrainConfig& c) { c.options<MrlOptions>().label_loss = MrlLabelLoss::Ce; }},
  };
  for (const auto& [what, nudge] : nudges) {
    TrainConfig c = options(MrlLabelLoss::Mce);
    nudge(c);
    StepResult r;
    auto method = step(c, r);
    const double worst = compare(*method, "", false);
    EXPECT_GT(worst, 1e-8) << what << " leaves the step within " << worst;
    std::cout << "mrl control " << what << ": largest difference " << worst << "\n";
  }
}

TEST(MrlSchedule, CosineFollowsMainNoisyStepCalls) {
  // README: "Epoch: 24 / 30 ... LR: 1.28428e-05", "Epoch: 25 / 30 ... LR: 9.54915e-06" at --lr 1e-4.
  EXPECT_NEAR(mrl_learning_rate(1e-4, 24, 30, MrlSchedule::Cos), 1.28428e-05, 1e-10);
  EXPECT_NEAR(mrl_learning_rate(1e-4, 25, 30, MrlSchedule::Cos), 9.54915e-06, 1e-11);
  // lr_schedu.step(0) after epoch 0 keeps the base rate for epoch 1 too.
  EXPECT_DOUBLE_EQ(mrl_learning_rate(1e-4, 0, 30, MrlSchedule::Cos), 1e-4);
  EXPECT_DOUBLE_EQ(mrl_learning_rate(1e-4, 1, 30, MrlSchedule::Cos), 1e-4);
  EXPECT_DOUBLE_EQ(mrl_learning_rate(1e-4, 200, 500, MrlSchedule::MultiStep), 1e-4);
  EXPECT_NEAR(mrl_learning_rate(1e-4, 201, 500, MrlSchedule::MultiStep), 1e-5, 1e-18);
  EXPECT_NEAR(mrl_learning_rate(1e-4, 401, 500, MrlSchedule::MultiStep), 1e-6, 1e-18);
}

}  // namespace
}  // namespace rematch::train
