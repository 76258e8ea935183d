// NCR's pieces (docs/methods/ncr.md): the soft margins (§2.4), the soft-margin triplet against its definition and its
// float64 gradient, `predict`'s rectified labels and their 0/0 guard (§2.3, §3), the co-divide's fallback threshold
// (§2.2 step 4), the step plan (§2: A's steps, then B's; two updates per iteration in the second half) and the flags
// refused by name. The whole step against the official code is ncr_golden_step_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "autograd/autograd.h"
#include "autograd/gradcheck.h"
#include "cli_runner.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/methods/make_method.h"
#include "train/methods/ncr/ncr_method.h"
#include "train/synth/pairs_world.h"

namespace rematch::train {
namespace {

TEST(NcrSoftMargin, ShapesOfTheCode) {
  EXPECT_DOUBLE_EQ(ncr_soft_margin(0.2, 0.5, SoftMargin::Linear), 0.1);
  EXPECT_DOUBLE_EQ(ncr_soft_margin(0.2, 0.5, SoftMargin::Exponential), 0.2 * (std::sqrt(10.0) - 1) / 9);
  EXPECT_NEAR(ncr_soft_margin(0.2, 0.5, SoftMargin::Sin), 0.1, 1e-16);
  for (SoftMargin s : {SoftMargin::Linear, SoftMargin::Exponential, SoftMargin::Sin}) {
    EXPECT_NEAR(ncr_soft_margin(0.2, 0.0, s), 0.0, 1e-16);  // a label 0: no margin
    EXPECT_NEAR(ncr_soft_margin(0.2, 1.0, s), 0.2, 1e-16);  // a label 1: the full margin
  }
}

// Σ_i max_{j≠i}[M_ij + S_ij − S_ii]_+ + Σ_j max_{i≠j}[M_ij + S_ij − S_jj]_+, written out, for a [B, B] and a
// [B, 1] margin (the same M_ij in both directions).
double triplet_by_hand(const std::vector<double>& S, const std::vector<double>& M, int64_t B, bool column) {
  auto m = [&](int64_t i, int64_t j) { return column ? M[i] : M[i * B + j]; };
  double total = 0;
  for (int64_t i = 0; i < B; ++i) {
    double a = 0, b = 0;
    for (int64_t j = 0; j < B; ++j) {
      if (j == i) continue;
      a = std::max(a, m(i, j) + S[i * B + j] - S[i * B + i]);  // image i against caption j
      b = std::max(b, m(j, i) + S[j * B + i] - S[i * B + i]);  // caption i against image j
    }
    total += a + b;
  }
  return total;
}

TEST(NcrSoftMarginTriplet, IsItsDefinitionAndHasItsGradient) {
  Generator gen(5);
  const int64_t B = 5;
  const Tensor S = rand({B, B}, DType::Float64, Device::cpu(), &gen);
  const Tensor Mfull = mul(rand({B, B}, DType::Float64, Device::cpu(), &gen), 0.2);
  const Tensor Mcol = mul(rand({B, 1}, DType::Float64, Device::cpu(), &gen), 0.2);
  for (const Tensor& M : {Mfull, Mcol}) {
    const double got = ncr_soft_margin_triplet(S, M).item<double>();
    EXPECT_NEAR(got, triplet_by_hand(S.to_vector<double>(), M.to_vector<double>(), B, M.size(1) == 1), 1e-14);
    EXPECT_GT(got, 0);
    const GradcheckResult g =
        gradcheck([&](const TensorList& in) { return ncr_soft_margin_triplet(in[0], M); }, {S});
    EXPECT_TRUE(g.ok) << g.message;
  }
  EXPECT_THROW(ncr_soft_margin_triplet(S, zeros({B, 2}, DType::Float64)), Error);
}

TEST(NcrPredict, RectifiedLabelsAndTheZeroGuard) {
  // A perfectly separated batch: every mean hinge 0, p_i = α for all, divided by α: every label 1.
  const int64_t B = 4;
  std::vector<double> s(B * B, 0.1);
  for (int64_t i = 0; i < B; ++i) s[i * B + i] = 0.9;
  for (double p : ncr_predict_labels(from_vector(s, {B, B}), 0.2)) EXPECT_DOUBLE_EQ(p, 1.0);
  // Pair 0 violated: ℓ_0 = 2 · (3 · [0.2 + 0.95 − 0.5]) / 4 = 0.975 → p_0 = clamp(0.2 − ℓ_0/2, 0, 0.2) = 0;
  // the others: ℓ_j = 2 · [0.2 + 0.95 − 0.9] / 4 = 0.125, p_j = 0.1375, the largest (r = ⌊4/10⌋ + 1 = 1): all 1.
  std::vector<double> v = s;
  v[0] = 0.5;
  for (int64_t j = 1; j < B; ++j) v[j] = v[j * B] = 0.95;
  const std::vector<double> p = ncr_predict_labels(from_vector(v, {B, B}), 0.2);
  EXPECT_DOUBLE_EQ(p[0], 0.0);
  for (int64_t i = 1; i < B; ++i) EXPECT_DOUBLE_EQ(p[static_cast<size_t>(i)], 1.0);
  // Every pair violated by more than 2α: every p_i clamps to 0, the code's 0/0; here every label is 0, not NaN.
  std::vector<double> flat(B * B, 0.9);
  for (int64_t i = 0; i < B; ++i) flat[i * B + i] = 0.1;
  for (double q : ncr_predict_labels(from_vector(flat, {B, B}), 0.2)) EXPECT_EQ(q, 0.0);
}

TEST(NcrSplit, ThresholdFallsBackToTheFirstPercentile) {
  // Two clusters of losses: the low one is clean.
  std::vector<double> losses;
  for (int i = 0; i < 150; ++i) losses.push_back(0.1 + 0.001 * (i % 7));
  for (int i = 0; i < 50; ++i) losses.push_back(0.8 + 0.001 * (i % 5));
  const NcrSplit s = ncr_split(losses, DType::Float64, 0.5, 1);
  int64_t clean = 0;
  for (size_t i = 0; i < losses.size(); ++i) {
    EXPECT_EQ(s.clean[i], i < 150 ? 1 : 0) << i;
    clean += s.clean[i];
  }
  EXPECT_EQ(clean, 150);
  // A threshold below every posterior: the ⌊N/100⌋-th smallest posterior becomes the threshold, so at least 1 %
  // of the pairs are noisy (split_prob).
  const NcrSplit all = ncr_split(losses, DType::Float64, 1e-300, 1);
  int64_t noisy = 0;
  for (uint8_t c : all.clean) noisy += c == 0;
  EXPECT_GE(noisy, 3);  // ⌊200/100⌋ + 1 posteriors at or below the 2nd smallest
  EXPECT_LT(noisy, 200);
  EXPECT_THROW(ncr_split({0.5}, DType::Float64, 0.5, 1), Error);
}

class NcrMethodTest : public test::TempDirTest {
 protected:
  TrainConfig config() {
    synth::PairsWorldConfig w;
    w.train_images = 24;
    w.dev_images = 4;
    w.test_images = 4;
    w.regions = 3;
    w.feature_dim = 8;
    synth::write_pairs_world(synth::make_pairs_world(w), path("pairs"));
    TrainConfig c;
    c.method = "ncr";
    c.data_path = path("pairs");
    c.data_name = "synth_precomp";
    c.noise_ratio = 0.5;
    c.batch_size = 8;
    NcrOptions& o = c.options<NcrOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
    c.warmup_epoch = 1;
    c.num_epochs = 2;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    return c;
  }
};

// Warm-up: A's batches then B's (each net only moves in its own steps); co-training epoch 0 (first half): one
// labelled step per iteration; epoch 1 (second half): labelled and unlabelled steps alternate.
TEST_F(NcrMethodTest, StepsTrainANetAtATimeAndTheSecondHalfAddsUnlabelledSteps) {
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(config(), log);
  auto& ncr = dynamic_cast<NcrMethod&>(*m);
  const EpochInfo warm = m->begin_epoch(0);
  EXPECT_EQ(warm.phase, "warmup");
  // 120 captions in batches of 8: 15 per net.
  ASSERT_EQ(warm.steps, 30);
  const Tensor b0 = clone(ncr.net(1).parameters()[0].detach());
  for (int64_t s = 0; s < 15; ++s) EXPECT_EQ(m->train_step(0, s).parts.count("warmup_A"), 1u);
  EXPECT_TRUE(test::all_close(ncr.net(1).parameters()[0], b0, 0, 0)) << "B must not move in A's steps";
  for (int64_t s = 15; s < 30; ++s) EXPECT_EQ(m->train_step(0, s).parts.count("warmup_B"), 1u);
  EXPECT_FALSE(test::all_close(ncr.net(1).parameters()[0], b0, 0, 0));
  m->end_epoch(0);

  const EpochInfo first = m->begin_epoch(1);
  EXPECT_EQ(first.phase, "co-train");
  ASSERT_EQ(ncr.probability(0).size(), 120u);
  for (const char* k : {"clean_size_A", "clean_size_B", "clean_precision_A", "clean_precision_B"})
    EXPECT_EQ(first.stats.count(k), 1u) << k;
  for (int64_t s = 0; s < first.steps; ++s) {
    const StepResult r = m->train_step(1, s);
    EXPECT_TRUE(r.parts.count("labeled_A") || r.parts.count("labeled_B")) << s;
  }
  const EpochInfo second = m->begin_epoch(2);
  ASSERT_GT(second.steps, 0);
  EXPECT_EQ(second.steps % 2, 0);
  for (int64_t s = 0; s < second.steps; ++s) {
    const StepResult r = m->train_step(2, s);
    const bool unlabelled = r.parts.count("unlabeled_A") || r.parts.count("unlabeled_B");
    EXPECT_EQ(unlabelled, s % 2 == 1) << s;
  }
  // Only co-training epochs compete for the tested state (`co_train.py: main` saves model_best there alone).
  EXPECT_FALSE(m->best_candidate(0));
  EXPECT_TRUE(m->best_candidate(1));
  EXPECT_TRUE(m->best_candidate(2));
  const EvalResult v = m->validate();
  EXPECT_EQ(v.metrics.count("rsum_A"), 1u);
  EXPECT_EQ(v.metrics.count("rsum_B"), 1u);
  const EvalResult t = m->test();
  EXPECT_EQ(t.metrics.count("rsum_A"), 1u);
  EXPECT_NE(t.table.find("net B alone"), std::string::npos);
}

// What a data-parallel run's ranks compare at an epoch's start (Method::plan_splits, docs/distributed.md §4.2):
// nothing in the warm-up, then both nets' clean flags, each choosing its peer's batches.
TEST_F(NcrMethodTest, ThePlanSplitsAreBothNetsCleanFlags) {
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(config(), log);
  auto& net = dynamic_cast<NcrMethod&>(*m);
  m->begin_epoch(0);
  EXPECT_TRUE(m->plan_splits(0).empty());
  m->begin_epoch(1);
  const std::vector<PlanSplit> p = m->plan_splits(1);
  ASSERT_EQ(p.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(p[static_cast<size_t>(k)].what, std::string("net ") + (k == 0 ? "A" : "B") + "'s clean flags");
    EXPECT_EQ(p[static_cast<size_t>(k)].split.kind, viz::SplitKind::kept);
    ASSERT_EQ(p[static_cast<size_t>(k)].split.values.size(), net.clean(k).size());
    for (size_t j = 0; j < net.clean(k).size(); ++j)
      EXPECT_EQ(p[static_cast<size_t>(k)].split.values[j], net.clean(k)[j]) << k << " " << j;
  }
}

TEST_F(NcrMethodTest, BadFlagsAreRefusedByName) {
  const TrainConfig c = config();
  const std::vector<std::string> base = {"train", "--method", "ncr", "--data_path", c.data_path, "--data_name",
                                         "synth_precomp", "--dry_run"};
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--p_threshold", "1.5"}, {"--p_threshold", "0"}, {"--soft_margin", "cubic"}, {"--batch_size", "1"}}) {
    std::vector<std::string> args = base;
    args.push_back(flag);
    args.push_back(value);
    const cli::test::CliResult r = cli::test::run_cli(args);
    EXPECT_NE(r.code, cli::kExitOk) << flag << " " << value;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
  }
  const cli::test::CliResult ok = cli::test::run_cli(base);
  EXPECT_EQ(ok.code, cli::kExitOk) << ok.err;
}

}  // namespace
}  // namespace rematch::train
