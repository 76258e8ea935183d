// SDML's training step against the OFFICIAL code itself (tests/reference/sdml_step_official.py runs penghu-cs/SDML
// `SDML.py: Solver.train_view` for each view on `model.py: Dense_Net` at hidden width 7 on the CPU in float64;
// fixture tests/fixtures/golden_steps/sdml/), run by SdmlMethod::train_step itself in float64 (SdmlOptions::dtype):
// 10 pairs, K = 3, L = 4, batch 4 (the rows np.random.seed(0)'s permutation gives first, the same for both views),
// alpha 0.5, W as Solver.__init__ drew it, Adam betas (0.5, 0.999) at 1e-4 (image) and 2e-4 (text) from moments of 4
// earlier steps. Every parameter of both views' encoders and decoders, both Adam moments of every parameter and each
// view's loss within 1e-10. The controls: a nudged alpha, image or text learning rate moves the result beyond the
// tolerance (StepDependsOnEveryHyperParameter).
#include <cmath>
#include <iostream>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/sdml/sdml_method.h"

namespace rematch::train {
namespace {

const std::string kMethod = "sdml";

class SdmlGoldenStepTest : public test::TempDirTest {
 protected:
  TrainConfig options() {
    test::write_golden_labeled(kMethod, path("data"));
    TrainConfig c;
    c.method = "sdml";
    c.data_path = path("data");
    c.noise_ratio = 0;
    c.batch_size = 4;
    c.num_epochs = 1;
    c.warmup_epoch = 0;
    c.learning_rate = 1e-4;
    c.lr_update = 0;
    c.grad_clip = 0;
    c.eval_batch = 1000;
    SdmlOptions& o = c.options<SdmlOptions>();
    o.hidden_dim = 7;
    o.output_dim = 4;
    o.alpha = 0.5;
    o.text_lr = 2e-4;
    o.dtype = DType::Float64;
    return c;
  }

  // The fixture's state of one view: "img." or "txt." files under the model's "img." / "txt." names.
  void put_view(TrainingState& s, models::SdmlView& view, const std::string& tag, const std::string& optim,
                double lr) {
    for (const auto& [name, t] : view.state_dict())
      s.put_tensor("model." + tag + "." + name, test::golden(kMethod, tag + ".before." + name));
    test::put_golden_adam(s, optim, view, "Adam", lr, 4, kMethod, tag + ".adam.");
  }

  std::unique_ptr<SdmlMethod> step(const TrainConfig& c, StepResult& result) {
    auto method =
        std::make_unique<SdmlMethod>(c, c.options<SdmlOptions>(), data::load_labeled(c.data_path, -1), log_);
    TrainingState s;
    method->save_state(s);
    s.put_tensor("model.W", test::golden(kMethod, "W"));
    put_view(s, method->model().img(), "img", "optim_img.", c.learning_rate);
    put_view(s, method->model().txt(), "txt", "optim_txt.", c.options<SdmlOptions>().text_lr);
    s.put_int("sdml.epoch", 0);
    s.put_int_vector("sdml.order", test::golden(kMethod, "order").to_vector<int64_t>());
    method->load_state(s);
    result = method->train_step(0, 0);
    return method;
  }

  double compare(SdmlMethod& method, bool expect) {
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
    for (const auto& [tag, optim] : {std::pair<std::string, std::string>{"img", "optim_img."}, {"txt", "optim_txt."}}) {
      models::SdmlView& view = tag == "img" ? method.model().img() : method.model().txt();
      int64_t i = 0;
      for (const auto& [name, p] : view.named_parameters()) {
        worst = std::max(worst, diff(p, tag + ".after." + name));
        for (const char* moment : {"exp_avg", "exp_avg_sq"})
          worst = std::max(worst, diff(after.get_tensor(optim + "state." + std::to_string(i) + "." + moment),
                                       tag + ".adam_after." + name + "." + moment));
        ++i;
      }
    }
    return worst;
  }

  std::ostringstream log_;
};

TEST_F(SdmlGoldenStepTest, StepMatchesTheOfficialCode) {
  StepResult r;
  auto method = step(options(), r);
  EXPECT_NEAR(r.parts.at("ae_img") + r.parts.at("d_img"), test::golden(kMethod, "img.loss").to_vector<double>()[0],
              1e-10);
  EXPECT_NEAR(r.parts.at("ae_txt") + r.parts.at("d_txt"), test::golden(kMethod, "txt.loss").to_vector<double>()[0],
              1e-10);
  EXPECT_GT(r.parts.at("d_img"), 0);
  EXPECT_EQ(r.pairs, 4);
  EXPECT_TRUE(test::all_close(method->model().W(), test::golden(kMethod, "W"), 0, 0)) << "W is never trained";
  const double worst = compare(*method, true);
  std::cout << "sdml golden step: largest difference over every parameter and Adam moment of both views " << worst
            << "\n";
}

TEST_F(SdmlGoldenStepTest, StepDependsOnEveryHyperParameter) {
  const std::vector<std::pair<std::string, std::function<void(TrainConfig&)>>> nudges = {
      {"alpha 0.5 -> 0.51", [](TrainConfig& c) { c.options<SdmlOptions>().alpha = 0.51; }},
      {"image learning rate 1e-4 -> 1.01e-4", [](TrainConfig& c) { c.learning_rate = 1.01e-4; }},
      {"text learning rate 2e-4 -> 2.02e-4", [](TrainConfig& c) { c.options<SdmlOptions>().text_lr = 2.02e-4; }},
  };
  for (const auto& [what, nudge] : nudges) {
    TrainConfig c = options();
    nudge(c);
    StepResult r;
    auto method = step(c, r);
    const double worst = compare(*method, false);
    EXPECT_GT(worst, 1e-8) << what << " leaves the step within " << worst;
    std::cout << "sdml control " << what << ": largest difference " << worst << "\n";
  }
}

}  // namespace
}  // namespace rematch::train
