// CREAM's co-training iterations and its losses against the official code itself (XLearning-SCU/2024-TIP-CREAM
// @f487d6f): tests/reference/cream_step_official.py runs the official `InfoNCELoss.py: InfoNCELoss.forward`,
// `model.py: SGRAF.train(mode="eval_loss")` (eval_train's per-batch call) and `train.py: split_samples`,
// `train_one_epoch` on the official SGRAF nets and `data.py` loaders in float64 (every change around the official
// code is listed in that script), and CreamMethod repeats them through its public interface:
//   * the criterion alone (cream_losses.h) on a 5x5 matrix whose soft negative weights straddle the filter: loss and
//     gradient in mode "train" (filter 0.15, filter 0, tau 0.2), "warmup", "predict", "eval_loss";
//   * one co-training iteration of A, then of B, with 8 clean, 8 hard, 8 noisy pairs (each net: clean, hard, noisy
//     Adam steps with the refined labels and the filter f), and with 21 clean, 2 hard, 1 noisy pair (ratio > 0.85:
//     the clean and hard filters are 0, every negative weighs; the noisy batch of one is not trained): every
//     parameter and buffer of both nets after A's iteration and after B's (the peer must not move), and the Adam
//     moments of the net that trained; the three sets split_samples makes of the two nets' posteriors;
//   * both nets' per-pair InfoNCE losses in eval mode (the input of the co-divide; the mixture itself is NCR's,
//     ncr_golden_step_test.cpp).
// Pinned randomness: dropout 0 (rematch's --dropout 0), every loader holds one batch and every loss, label and the
// filter are invariant under a permutation of the batch, the split's posteriors are given.
// Controls: --tau 0.2 (the loss fixture's "tau") and --hard_start_epoch 2 (the clean filter becomes 1, the hard step
// goes) each move the result far beyond the tolerance (CreamGoldenStepTest.NudgedOptionsMoveTheStep).
// Tolerance 1e-10 (observed: the printed maxima).
#include <iostream>
#include <sstream>

#include "autograd/autograd.h"
#include "golden_step_util.h"
#include "train/methods/cream/cream_losses.h"
#include "train/methods/cream/cream_method.h"

namespace rematch::train {
namespace {

const std::string kMethod = "cream";

class CreamGoldenStepTest : public test::TempDirTest {
 protected:
  TrainConfig config(int64_t batch) {
    TrainConfig c = test::golden_precomp_config("cream", kMethod, path("data"));
    CreamOptions& o = c.options<CreamOptions>();
    o.embed_size = 4;
    o.word_dim = 3;
    o.sim_dim = 4;
    o.sgr_step = 3;
    o.dropout = 0;
    o.tau = 0.07;
    o.p_threshold = 0.5;
    o.hard_start_epoch = 1;
    o.noisy_start_epoch = 1;
    o.dtype = DType::Float64;
    c.batch_size = batch;
    c.learning_rate = 2e-4;
    c.grad_clip = 2.0;
    c.warmup_epoch = 0;
    c.num_epochs = 40;
    c.lr_update = 10;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    return c;
  }
  CreamMethod method(const TrainConfig& c, std::ostream& log) {
    return CreamMethod(c, c.options<CreamOptions>(), load_pairs_data(c, false, log), log);
  }
  // Both nets' weights from the fixture (as before the step), with Adam moments of 4 earlier steps, and `setting`'s
  // split, at co-training epoch 1.
  void load_setting(CreamMethod& m, const std::string& setting) {
    TrainingState s;
    m.save_state(s);
    test::put_golden_module(s, "model.", m.net(0), kMethod, "A.before.");
    test::put_golden_module(s, "model_B.", m.net(1), kMethod, "B.before.");
    test::put_golden_adam(s, "optim.", m.net(0), "Adam", 2e-4, 4, kMethod, "A.adam.");
    test::put_golden_adam(s, "optim_B.", m.net(1), "Adam", 2e-4, 4, kMethod, "B.adam.");
    const std::vector<double> pa = test::golden(kMethod, setting + ".prob_A").to_vector<double>();
    const std::vector<double> pb = test::golden(kMethod, setting + ".prob_B").to_vector<double>();
    s.put_double_vector("cream.prob_A", pa);
    s.put_double_vector("cream.prob_B", pb);
    std::vector<uint8_t> ca, cb;
    for (size_t i = 0; i < pa.size(); ++i) {
      ca.push_back(pa[i] > 0.5);
      cb.push_back(pb[i] > 0.5);
    }
    const std::vector<uint8_t> parts = cream_parts(ca, cb);
    EXPECT_EQ(std::vector<int64_t>(parts.begin(), parts.end()),
              test::golden(kMethod, setting + ".parts").to_vector<int64_t>())
        << setting << ": split_samples";
    s.put_int_vector("cream.parts", std::vector<int64_t>(parts.begin(), parts.end()));
    s.put_int("epoch", 1);
    m.load_state(s);
  }
  double expect_moments(const TrainingState& s, const std::string& optim, const nn::Module& net,
                        const std::string& prefix) {
    double worst = 0;
    int64_t i = 0;
    for (const auto& [name, p] : net.named_parameters()) {
      for (const char* m : {"exp_avg", "exp_avg_sq"})
        worst = std::max(worst, test::expect_golden_tensor(
                                    s.get_tensor(optim + "state." + std::to_string(i) + "." + m),
                                    test::golden(kMethod, prefix + name + "." + m), prefix + name + "." + m));
      ++i;
    }
    return worst;
  }
  // One iteration of A (steps [0, per_net)), then of B, against the fixture's `setting`.
  void run_setting(const std::string& setting, int64_t batch, int64_t per_net) {
    std::ostringstream log;
    CreamMethod m = method(config(batch), log);
    load_setting(m, setting);
    ASSERT_EQ(m.current_epoch().steps, 2 * per_net);
    EXPECT_GT(test::golden_step_size(m.net(0), kMethod, "A.before.", setting + ".A.after_A."), 1e-5);
    EXPECT_GT(test::golden_step_size(m.net(1), kMethod, "B.before.", setting + ".B.after_B."), 1e-5);
    for (int64_t step = 0; step < per_net; ++step) m.train_step(1, step);
    double worst = test::expect_golden_module(m.net(0), kMethod, setting + ".A.after_A.");
    worst = std::max(worst, test::expect_golden_module(m.net(1), kMethod, setting + ".B.after_A."));
    TrainingState after_a;
    m.save_state(after_a);
    worst = std::max(worst, expect_moments(after_a, "optim.", m.net(0), setting + ".A.adam_after."));
    for (int64_t step = per_net; step < 2 * per_net; ++step) m.train_step(1, step);
    worst = std::max(worst, test::expect_golden_module(m.net(0), kMethod, setting + ".A.after_B."));
    worst = std::max(worst, test::expect_golden_module(m.net(1), kMethod, setting + ".B.after_B."));
    TrainingState after_b;
    m.save_state(after_b);
    worst = std::max(worst, expect_moments(after_b, "optim_B.", m.net(1), setting + ".B.adam_after."));
    std::cout << "cream golden step (" << setting << "): largest difference over both nets and moments " << worst
              << "\n";
  }
};

Tensor loss_scores() {
  return test::golden(kMethod, "loss.scores");
}

TEST_F(CreamGoldenStepTest, CriterionMatchesInfoNceLossForward) {
  const std::vector<double> labels = test::golden(kMethod, "loss.labels").to_vector<double>();
  double worst = 0;
  for (const auto& [tag, tau, filter] : {std::tuple<std::string, double, double>{"filter", 0.07, 0.15},
                                         {"open", 0.07, 0.0},
                                         {"tau", 0.2, 0.15}}) {
    Tensor s = loss_scores().detach();
    s.requires_grad_();
    const Tensor loss = cream_refined_loss(s, labels, tau, filter);
    backward(loss);
    worst = std::max(worst, test::expect_golden_tensor(reshape(loss.detach(), {1}),
                                                       test::golden(kMethod, "loss." + tag + ".value"), tag));
    worst = std::max(worst, test::expect_golden_tensor(s.grad(), test::golden(kMethod, "loss." + tag + ".grad"),
                                                       tag + " gradient"));
  }
  // The filter straddles the weights: with it the loss differs from the unfiltered one and from positives only.
  const double filtered = test::golden(kMethod, "loss.filter.value").to_vector<double>()[0];
  const double open = test::golden(kMethod, "loss.open.value").to_vector<double>()[0];
  const double positives_only = cream_refined_loss(loss_scores(), labels, 0.07, 2.0).item<double>();
  EXPECT_GT(std::abs(filtered - open), 1e-3);
  EXPECT_GT(std::abs(filtered - positives_only), 1e-3);

  Tensor s = loss_scores().detach();
  s.requires_grad_();
  const Tensor warm = mean(cream_infonce_per_pair(s, 0.07));
  backward(warm);
  worst = std::max(worst, test::expect_golden_tensor(reshape(warm.detach(), {1}),
                                                     test::golden(kMethod, "loss.warmup.value"), "warmup"));
  worst = std::max(worst, test::expect_golden_tensor(s.grad(), test::golden(kMethod, "loss.warmup.grad"),
                                                     "warmup gradient"));
  worst = std::max(worst, test::expect_golden_tensor(from_vector(cream_predict(loss_scores(), 0.07)),
                                                     test::golden(kMethod, "loss.predict"), "predict"));
  worst = std::max(worst, test::expect_golden_tensor(cream_infonce_per_pair(loss_scores(), 0.07).detach(),
                                                     test::golden(kMethod, "loss.eval_loss"), "eval_loss"));
  std::cout << "cream criterion: largest difference " << worst << "\n";
}

TEST_F(CreamGoldenStepTest, IterationsWithFilteredWeightsMatchTrainOneEpoch) { run_setting("filtered", 8, 3); }

TEST_F(CreamGoldenStepTest, IterationsAboveTheCleanRatioMatchTrainOneEpoch) { run_setting("open", 21, 2); }

TEST_F(CreamGoldenStepTest, PerPairLossesMatchEvalLoss) {
  std::ostringstream log;
  CreamMethod m = method(config(24), log);
  load_setting(m, "filtered");
  const auto [la, lb] = m.per_sample_losses(1);
  double worst = test::expect_golden_tensor(from_vector(la), test::golden(kMethod, "eval_loss.A"), "A");
  worst = std::max(worst, test::expect_golden_tensor(from_vector(lb), test::golden(kMethod, "eval_loss.B"), "B"));
  std::cout << "cream eval_loss: largest difference " << worst << "\n";
}

TEST_F(CreamGoldenStepTest, NudgedOptionsMoveTheStep) {
  // --tau 0.2 against the fixture's 0.07 (the criterion's "tau" case is the official one at 0.2).
  const std::vector<double> labels = test::golden(kMethod, "loss.labels").to_vector<double>();
  const double at_007 = test::golden(kMethod, "loss.filter.value").to_vector<double>()[0];
  EXPECT_GT(std::abs(cream_refined_loss(loss_scores(), labels, 0.2, 0.15).item<double>() - at_007), 1e-3);
  // --hard_start_epoch 2: co-training epoch 1 is then before the hard stage (clean filter 1, no hard or noisy step).
  std::ostringstream log;
  TrainConfig c = config(8);
  c.options<CreamOptions>().hard_start_epoch = 2;
  c.options<CreamOptions>().noisy_start_epoch = 2;
  CreamMethod m = method(c, log);
  load_setting(m, "filtered");
  ASSERT_EQ(m.current_epoch().steps, 2);
  m.train_step(1, 0);
  double diff = 0;
  for (const auto& [name, t] : m.net(0).state_dict()) {
    if (!is_floating(t.dtype())) continue;
    const std::vector<double> got = to(t, DType::Float64).to_vector<double>();
    const std::vector<double> want = test::golden(kMethod, "filtered.A.after_A." + name).to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i) diff = std::max(diff, std::abs(got[i] - want[i]));
  }
  EXPECT_GT(diff, 1e-6) << "the nudged --hard_start_epoch must move the step";
  std::cout << "cream --hard_start_epoch 2: A after its iteration differs from the fixture by " << diff << "\n";
}

}  // namespace
}  // namespace rematch::train
