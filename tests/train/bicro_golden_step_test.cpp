// BiCro's steps, its soft labels and its split against the official code itself (xu5zhao/BiCro @0231631):
// tests/reference/bicro_step_official.py runs the official `co_train.py: eval_train` (fit_type "bmm"), `split_prob`,
// `warmup` ("warmup_sele"), `SGRAF.predict` and `train` on the official `model.py: SGRAF` nets in float64 (every
// change around the official code is listed in that script), and BicroMethod repeats them through its public
// interface:
//   * one co-training iteration of A on B's split, then one of B on A's, in the second half of training: the
//     peer's soft labels of the labelled batch (anchors, bidirectional consistency, the code's scatter order) and
//     of the unlabelled batch, then an Adam step on the unlabelled batch and one on the labelled batch (exponential
//     soft margin, clip 2): every parameter and buffer of both nets after each iteration and the Adam moments of
//     the net that trained;
//   * the same iteration of A in the first half (the labelled step only);
//   * the warm-up of A, then of B (the sum of the ⌊24·0.3⌋ = 7 smallest per-pair losses);
//   * the split: both nets' per-pair losses in eval mode, min–max normalised, BiCro's Beta mixture, the clean
//     posteriors and `split_prob`'s flags;
//   * nudges: --noise_tem, --warmup_rate, --margin, --soft_margin and --p_threshold each move what they govern by
//     far more than the tolerance (the fixture's centred image features and scaled score head spread the labels
//     over [0, 1] and the scores as wide as the margin; tests/reference/bicro_step_official.py).
// The fixture's Beta mixtures give the pairs of smallest and largest loss (x = 0 and 1) a NaN posterior (∞/∞, as
// scipy's density is infinite there for α < 1 or β < 1): both sides must agree on it, and neither is clean.
// Pinned randomness: dropout 0 in both; the loaders of the co-training hold one batch each, given to the official
// code in rematch's order; the split the iterations train on is given. Tolerance 1e-10 (observed: the printed
// maxima).
#include <iostream>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/bicro/bicro_method.h"

namespace rematch::train {
namespace {

const std::string kMethod = "bicro";
constexpr int64_t kPairs = 24;

// The largest |entry − fixture| over a module's state (no assertion: for the nudges).
double module_difference(const nn::Module& m, const std::string& prefix) {
  double worst = 0;
  for (const auto& [name, t] : m.state_dict()) {
    const std::vector<double> got = to(t, DType::Float64).to_vector<double>();
    const std::vector<double> want = to(test::golden(kMethod, prefix + name), DType::Float64).to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  }
  return worst;
}

double vector_difference(const std::vector<double>& got, const std::string& name) {
  const std::vector<double> want = test::golden(kMethod, name).to_vector<double>();
  EXPECT_EQ(got.size(), want.size()) << name;
  double worst = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  return worst;
}

class BicroGoldenStepTest : public test::TempDirTest {
 protected:
  TrainConfig config(int64_t batch, int64_t warmup_epoch) {
    TrainConfig c = test::golden_precomp_config("bicro", kMethod, path("data"));
    BicroOptions& o = c.options<BicroOptions>();
    o.embed_size = 4;
    o.word_dim = 3;
    o.sim_dim = 4;
    o.sgr_step = 3;
    o.dropout = 0;
    o.margin = 0.2;
    o.soft_margin = SoftMargin::Exponential;
    o.p_threshold = 0.5;
    o.warmup_rate = 0.3;
    o.noise_tem = 0.5;
    o.fit_type = BicroFit::Bmm;
    o.dtype = DType::Float64;
    c.batch_size = batch;
    c.learning_rate = 2e-4;
    c.grad_clip = 2.0;
    c.warmup_epoch = warmup_epoch;
    c.num_epochs = 2;  // co-training epoch 1 is in the second half, epoch 0 in the first
    c.progress = run::ProgressStyle::None;
    return c;
  }
  BicroMethod method(TrainConfig c, std::ostream& log) {
    resolve_defaults(c);
    return BicroMethod(c, c.options<BicroOptions>(), load_pairs_data(c, false, log), log);
  }
  // Both nets as before any step, the given split, at `epoch`.
  void start(BicroMethod& m, int64_t epoch, bool with_split) {
    TrainingState s;
    m.save_state(s);
    test::put_golden_module(s, "model.", m.net(0), kMethod, "A.before.");
    test::put_golden_module(s, "model_B.", m.net(1), kMethod, "B.before.");
    test::put_golden_adam(s, "optim.", m.net(0), "Adam", 2e-4, 4, kMethod, "A.adam.");
    test::put_golden_adam(s, "optim_B.", m.net(1), "Adam", 2e-4, 4, kMethod, "B.adam.");
    if (with_split) {
      for (const char* n : {"A", "B"}) {
        const std::vector<double> p = test::golden(kMethod, std::string("prob_") + n).to_vector<double>();
        std::vector<int64_t> clean;
        for (double v : p) clean.push_back(v > 0.5 ? 1 : 0);
        s.put_tensor(std::string("bicro.prob_") + n, from_vector(p, {kPairs}));
        s.put_int_vector(std::string("bicro.clean_") + n, clean);
      }
    }
    s.put_int("epoch", epoch);
    m.load_state(s);
  }
  double expect_moments(BicroMethod& m, int which, const std::string& prefix) {
    TrainingState s;
    m.save_state(s);
    const std::string optim = which == 0 ? "optim." : "optim_B.";
    double worst = 0;
    int64_t i = 0;
    for (const auto& [name, p] : m.net(which).named_parameters()) {
      for (const char* k : {"exp_avg", "exp_avg_sq"})
        worst = std::max(worst, test::expect_golden_tensor(s.get_tensor(optim + "state." + std::to_string(i) + "." + k),
                                                           test::golden(kMethod, prefix + name + "." + k),
                                                           prefix + name + "." + k));
      ++i;
    }
    return worst;
  }
  double expect_labels(BicroMethod& m, const std::string& net) {
    double worst = test::expect_golden_tensor(from_vector(m.labels_labeled()),
                                              test::golden(kMethod, "labels." + net + ".labeled"),
                                              net + "'s labelled labels");
    return std::max(worst, test::expect_golden_tensor(from_vector(m.labels_unlabeled()),
                                                      test::golden(kMethod, "labels." + net + ".unlabeled"),
                                                      net + "'s unlabelled labels"));
  }
};

TEST_F(BicroGoldenStepTest, CoTrainingIterationsOfAThenBMatchTheOfficialCode) {
  std::ostringstream log;
  BicroMethod m = method(config(12, 0), log);
  start(m, 1, true);
  ASSERT_EQ(m.current_epoch().steps, 4);  // A: unlabelled, labelled; B: unlabelled, labelled
  EXPECT_GT(test::golden_step_size(m.net(0), kMethod, "A.before.", "A.after_A."), 1e-5);
  EXPECT_GT(test::golden_step_size(m.net(1), kMethod, "B.before.", "B.after_B."), 1e-5);

  m.train_step(1, 0);
  double labels = expect_labels(m, "A");
  m.train_step(1, 1);
  EXPECT_TRUE(m.labels_labeled().empty());  // used up by the iteration's last step
  double worst = test::expect_golden_module(m.net(0), kMethod, "A.after_A.");
  worst = std::max(worst, test::expect_golden_module(m.net(1), kMethod, "B.after_A."));
  worst = std::max(worst, expect_moments(m, 0, "A.adam_after."));
  std::cout << "bicro golden step, A's iteration: labels " << labels << ", both nets and A's moments " << worst << "\n";

  m.train_step(1, 2);
  labels = expect_labels(m, "B");
  m.train_step(1, 3);
  double worst_b = test::expect_golden_module(m.net(0), kMethod, "A.after_B.");
  worst_b = std::max(worst_b, test::expect_golden_module(m.net(1), kMethod, "B.after_B."));
  worst_b = std::max(worst_b, expect_moments(m, 1, "B.adam_after."));
  std::cout << "bicro golden step, B's iteration: labels " << labels << ", both nets and B's moments " << worst_b
            << "\n";
}

TEST_F(BicroGoldenStepTest, FirstHalfIterationIsTheLabelledStepOnly) {
  std::ostringstream log;
  BicroMethod m = method(config(12, 0), log);
  start(m, 0, true);
  ASSERT_EQ(m.current_epoch().steps, 2);  // A: labelled; B: labelled
  m.train_step(0, 0);
  double worst = test::expect_golden_module(m.net(0), kMethod, "first.A.after.");
  worst = std::max(worst, test::expect_golden_module(m.net(1), kMethod, "first.B.after."));
  worst = std::max(worst, expect_moments(m, 0, "first.A.adam_after."));
  std::cout << "bicro golden step, first half: " << worst << "\n";
}

TEST_F(BicroGoldenStepTest, WarmupOfAThenBMatchesWarmupSele) {
  std::ostringstream log;
  BicroMethod m = method(config(kPairs, 1), log);
  start(m, 0, false);
  ASSERT_EQ(m.current_epoch().steps, 2);
  m.train_step(0, 0);
  m.train_step(0, 1);
  double worst = test::expect_golden_module(m.net(0), kMethod, "warm.A.after.");
  worst = std::max(worst, test::expect_golden_module(m.net(1), kMethod, "warm.B.after."));
  worst = std::max(worst, expect_moments(m, 0, "warm.A.adam_after."));
  worst = std::max(worst, expect_moments(m, 1, "warm.B.adam_after."));
  std::cout << "bicro golden step, warm-up: " << worst << "\n";
}

TEST_F(BicroGoldenStepTest, SplitMatchesEvalTrainAndBetaMixture) {
  std::ostringstream log;
  BicroMethod m = method(config(kPairs, 0), log);
  start(m, -1, false);
  const auto [la, lb] = m.per_sample_losses(1);
  double worst = 0;
  int noisy = 0, nan_posteriors = 0;
  for (int k = 0; k < 2; ++k) {
    const std::string n = k == 0 ? "A" : "B";
    const BicroSplit s = bicro_split(k == 0 ? la : lb, DType::Float64, 0.5, BicroFit::Bmm, 0);
    worst = std::max(worst, test::expect_golden_tensor(from_vector(s.normalised),
                                                       test::golden(kMethod, "split." + n + ".normalised"),
                                                       n + " normalised losses"));
    // NaN where the reference has NaN, the rest to the tolerance.
    std::vector<double> got = s.probability;
    const std::vector<double> want_p = test::golden(kMethod, "split." + n + ".probability").to_vector<double>();
    ASSERT_EQ(got.size(), want_p.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(std::isnan(got[i]), std::isnan(want_p[i])) << n << " posterior " << i;
      if (std::isnan(got[i])) got[i] = 0, ++nan_posteriors;
    }
    std::vector<double> want_clean_nan = want_p;
    for (double& v : want_clean_nan) v = std::isnan(v) ? 0 : v;
    worst = std::max(worst, test::expect_golden_tensor(from_vector(got), from_vector(want_clean_nan),
                                                       n + " clean posterior"));
    const std::vector<int64_t> want = test::golden(kMethod, "split." + n + ".clean").to_vector<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(s.clean.begin(), s.clean.end()), want) << n << " clean flags";
    for (int64_t c : want) noisy += c == 0;
    // A nudged threshold changes the flags: each net has posteriors between 0.01 and 0.5.
    const BicroSplit nudged = bicro_split(k == 0 ? la : lb, DType::Float64, 0.01, BicroFit::Bmm, 0);
    EXPECT_NE(nudged.clean, s.clean) << n << ": --p_threshold 0.01 flags the same pairs";
  }
  EXPECT_GT(noisy, 0);
  EXPECT_GT(nan_posteriors, 0);
  std::cout << "bicro split: largest difference (normalised losses, posteriors) " << worst << "\n";
}

// Each hyper-parameter moves the step it governs far beyond the tolerance.
TEST_F(BicroGoldenStepTest, NudgedHyperParametersMoveTheStep) {
  auto co_train = [&](const std::function<void(TrainConfig&)>& nudge) {
    std::ostringstream log;
    TrainConfig c = config(12, 0);
    nudge(c);
    BicroMethod m = method(c, log);
    start(m, 1, true);
    m.train_step(1, 0);
    const double labels = std::max(vector_difference(m.labels_labeled(), "labels.A.labeled"),
                                   vector_difference(m.labels_unlabeled(), "labels.A.unlabeled"));
    m.train_step(1, 1);
    return std::make_pair(labels, module_difference(m.net(0), "A.after_A."));
  };
  const auto noise_tem = co_train([](TrainConfig& c) { c.options<BicroOptions>().noise_tem = 0.9; });
  EXPECT_GT(noise_tem.first, 0.5) << "--noise_tem 0.9 zeroes the same labels";
  EXPECT_GT(noise_tem.second, 1e-7);
  const auto margin = co_train([](TrainConfig& c) { c.options<BicroOptions>().margin = 0.25; });
  EXPECT_GT(margin.second, 1e-7);
  const auto linear = co_train([](TrainConfig& c) { c.options<BicroOptions>().soft_margin = SoftMargin::Linear; });
  EXPECT_LT(linear.first, 1e-12);  // the labels do not depend on it
  EXPECT_GT(linear.second, 1e-7);

  std::ostringstream log;
  TrainConfig c = config(kPairs, 1);
  c.options<BicroOptions>().warmup_rate = 0.25;  // ⌊24·0.25⌋ = 6 pairs instead of 7
  BicroMethod m = method(c, log);
  start(m, 0, false);
  m.train_step(0, 0);
  const double warm = module_difference(m.net(0), "warm.A.after.");
  EXPECT_GT(warm, 1e-7);
  std::cout << "bicro nudges (largest change of A after its iteration): noise_tem 0.5->0.9 " << noise_tem.second
            << " (labels " << noise_tem.first << "), margin 0.2->0.25 " << margin.second << ", soft_margin linear "
            << linear.second << ", warmup_rate 0.3->0.25 " << warm << "\n";
}

}  // namespace
}  // namespace rematch::train
