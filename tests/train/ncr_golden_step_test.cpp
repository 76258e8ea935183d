// NCR's co-training step and its co-divide against the official code itself (XLearning-SCU/2021-NeurIPS-NCR
// @60256ba): tests/reference/ncr_step_official.py runs the official `NCR/co_train.py: eval_train`, `split_prob` and
// `train` on the official `NCR/model.py: SGRAF` nets and `NCR/data.py` loaders in float64 (every change around the
// official code is listed in that script), and NcrMethod repeats them through its public interface:
//   * one co-training iteration of A on B's split, then one of B on A's, in the second half of training
//     (labelled step with the [B, B] soft margins of w_i + (1 − w_i)·p_j, then unlabelled step with the [B, 1]
//     margins of (p^A_i + p^B_i)/2; exponential soft margin, clip 2, Adam): every parameter and buffer of both nets
//     after A's iteration and after B's (the peer must not move: eval mode, no update), and the Adam moments of the
//     net that trained;
//   * the co-divide of an epoch: both nets' per-sample losses in eval mode over one batch of all 16 pairs, min–max
//     normalised, the Gaussian mixture (sklearn's GaussianMixture(2, max_iter=10, tol=1e-2, reg_covar=5e-4), started
//     from the k-means labels sklearn drew, which the reference saves) and `split_prob`'s clean flags.
// Pinned randomness (why not more): dropout is 0 in both (rematch's --dropout 0; torch's dropout masks cannot be
// replayed by rematch's generator), each loader holds one batch and every loss is invariant under a permutation of
// its batch (so the loaders' shuffles do not matter), sklearn's k-means++ draw is replaced by its saved labels, and
// the split the iteration trains on is given (16 pairs through the mixture would not give batches of 8).
// Tolerance 1e-10 (observed: the printed maxima).
#include <iostream>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/ncr/ncr_method.h"

namespace rematch::train {
namespace {

const std::string kMethod = "ncr";

class NcrGoldenStepTest : public test::TempDirTest {
 protected:
  TrainConfig config(int64_t batch) {
    TrainConfig c = test::golden_precomp_config("ncr", kMethod, path("data"));
    NcrOptions& o = c.options<NcrOptions>();
    o.embed_size = 4;
    o.word_dim = 3;
    o.sim_dim = 4;
    o.sgr_step = 3;
    o.dropout = 0;
    o.margin = 0.2;
    o.soft_margin = SoftMargin::Exponential;
    o.p_threshold = 0.5;
    o.dtype = DType::Float64;
    c.batch_size = batch;
    c.learning_rate = 2e-4;
    c.grad_clip = 2.0;
    c.warmup_epoch = 0;
    c.num_epochs = 2;  // co-training epoch 1 is in the second half: both updates of an iteration
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    return c;
  }
  NcrMethod method(const TrainConfig& c, std::ostream& log) {
    return NcrMethod(c, c.options<NcrOptions>(), load_pairs_data(c, false, log), log);
  }
  // Both nets' weights from the fixture (as before the step), with Adam moments of 4 earlier steps.
  void put_nets(NcrMethod& m, TrainingState& s) {
    test::put_golden_module(s, "model.", m.net(0), kMethod, "A.before.");
    test::put_golden_module(s, "model_B.", m.net(1), kMethod, "B.before.");
    test::put_golden_adam(s, "optim.", m.net(0), "Adam", 2e-4, 4, kMethod, "A.adam.");
    test::put_golden_adam(s, "optim_B.", m.net(1), "Adam", 2e-4, 4, kMethod, "B.adam.");
  }
  // The Adam moments of `net` in the method's state against the fixture's `prefix`.
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
};

std::vector<int64_t> clean_of(const std::vector<double>& prob) {
  std::vector<int64_t> c;
  for (double p : prob) c.push_back(p > 0.5 ? 1 : 0);
  return c;
}

TEST_F(NcrGoldenStepTest, CoTrainingIterationsOfAThenBMatchTheOfficialCode) {
  std::ostringstream log;
  NcrMethod method = this->method(config(8), log);
  TrainingState s;
  method.save_state(s);
  put_nets(method, s);
  const std::vector<double> prob_a = test::golden(kMethod, "prob_A").to_vector<double>();
  const std::vector<double> prob_b = test::golden(kMethod, "prob_B").to_vector<double>();
  s.put_tensor("ncr.prob_A", from_vector(prob_a, {16}));
  s.put_tensor("ncr.prob_B", from_vector(prob_b, {16}));
  s.put_int_vector("ncr.clean_A", clean_of(prob_a));
  s.put_int_vector("ncr.clean_B", clean_of(prob_b));
  s.put_int("ncr.has_targets_u", 0);
  s.put_int("epoch", 1);
  method.load_state(s);
  // A: labelled, unlabelled; B: labelled, unlabelled.
  ASSERT_EQ(method.current_epoch().steps, 4);
  EXPECT_GT(test::golden_step_size(method.net(0), kMethod, "A.before.", "A.after_A."), 1e-5);
  EXPECT_GT(test::golden_step_size(method.net(1), kMethod, "B.before.", "B.after_B."), 1e-5);

  for (int64_t step = 0; step < 2; ++step) method.train_step(1, step);
  double worst = test::expect_golden_module(method.net(0), kMethod, "A.after_A.");
  worst = std::max(worst, test::expect_golden_module(method.net(1), kMethod, "B.after_A."));
  TrainingState after_a;
  method.save_state(after_a);
  worst = std::max(worst, expect_moments(after_a, "optim.", method.net(0), "A.adam_after."));
  std::cout << "ncr golden step, A's iteration: largest difference over both nets and A's moments " << worst << "\n";

  for (int64_t step = 2; step < 4; ++step) method.train_step(1, step);
  double worst_b = test::expect_golden_module(method.net(0), kMethod, "A.after_B.");
  worst_b = std::max(worst_b, test::expect_golden_module(method.net(1), kMethod, "B.after_B."));
  TrainingState after_b;
  method.save_state(after_b);
  worst_b = std::max(worst_b, expect_moments(after_b, "optim_B.", method.net(1), "B.adam_after."));
  std::cout << "ncr golden step, B's iteration: largest difference over both nets and B's moments " << worst_b << "\n";
}

TEST_F(NcrGoldenStepTest, CoDivideMatchesEvalTrainAndSklearn) {
  std::ostringstream log;
  NcrMethod method = this->method(config(16), log);
  TrainingState s;
  method.save_state(s);
  put_nets(method, s);
  method.load_state(s);
  const auto [la, lb] = method.per_sample_losses(1);
  double worst = 0;
  int changed = 0;
  for (int k = 0; k < 2; ++k) {
    const std::string n = k == 0 ? "A" : "B";
    const std::vector<int64_t> labels64 = test::golden(kMethod, "split." + n + ".kmeans_labels").to_vector<int64_t>();
    const NcrSplit split = ncr_split(k == 0 ? la : lb, DType::Float64, 0.5, 0,
                                     std::vector<int>(labels64.begin(), labels64.end()));
    worst = std::max(worst, test::expect_golden_tensor(from_vector(split.normalised),
                                                       test::golden(kMethod, "split." + n + ".normalised"),
                                                       n + " normalised losses"));
    worst = std::max(worst, test::expect_golden_tensor(from_vector(split.probability),
                                                       test::golden(kMethod, "split." + n + ".probability"),
                                                       n + " clean probability"));
    const std::vector<int64_t> want = test::golden(kMethod, "split." + n + ".clean").to_vector<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(split.clean.begin(), split.clean.end()), want) << n << " clean flags";
    for (int64_t c : want) changed += c == 0;
  }
  // A split that flags nothing tests little: the fixture's flags some pairs of each net as noisy.
  EXPECT_GT(changed, 0);
  std::cout << "ncr co-divide: largest difference (normalised losses, posteriors) " << worst << "\n";
}

}  // namespace
}  // namespace rematch::train
