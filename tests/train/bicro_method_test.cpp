// BiCro's pieces (docs/methods/bicro.md): scipy's Beta density at the edges (§3), the Beta mixture's fixed start
// and its clean component (§3), the anchors (§4.1), the bidirectional consistency and its ratio (§4.2), the code's
// scatter order of the labelled batch's labels (§4.3), the column margins (§5), the warm-up loss and its float64
// gradient (§2), the split's degenerate cases, the step plan (unlabelled update before the labelled one in the
// second half) and the flags refused by name. The whole step against the official code is
// bicro_golden_step_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "autograd/autograd.h"
#include "autograd/gradcheck.h"
#include "cli_runner.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/methods/bicro/bicro_beta_mixture.h"
#include "train/methods/bicro/bicro_method.h"
#include "train/methods/make_method.h"
#include "train/synth/pairs_world.h"

namespace rematch::train {
namespace {

TEST(BicroBetaPdf, IsScipysIncludingTheEdges) {
  // scipy.stats.beta.pdf(0.3, 2.5, 3.5) and (0.9, 0.7, 0.4).
  EXPECT_NEAR(bicro_beta_pdf(0.3, 2.5, 3.5), 1.8297671231132155, 1e-13);
  EXPECT_NEAR(bicro_beta_pdf(0.9, 0.7, 0.4), 1.3576315918045645, 1e-13);
  const double inf = std::numeric_limits<double>::infinity();
  // scipy: beta.pdf([0, 1, 0, 1, 0, 1], [.5, .5, 1, 1, 2, 2], [2, 2, 3, 3, .7, .7]) = [inf, 0, 3, 0, 0, inf].
  EXPECT_EQ(bicro_beta_pdf(0, 0.5, 2), inf);
  EXPECT_EQ(bicro_beta_pdf(1, 0.5, 2), 0);
  EXPECT_NEAR(bicro_beta_pdf(0, 1, 3), 3, 1e-13);
  EXPECT_EQ(bicro_beta_pdf(1, 1, 3), 0);
  EXPECT_EQ(bicro_beta_pdf(0, 2, 0.7), 0);
  EXPECT_EQ(bicro_beta_pdf(1, 2, 0.7), inf);
  EXPECT_EQ(bicro_beta_pdf(1.5, 2, 2), 0);
  EXPECT_TRUE(std::isnan(bicro_beta_pdf(0.5, -1, 2)));
}

TEST(BicroBetaMixture, SmallLossesAreCleanUnderComponentZero) {
  std::vector<double> x;
  for (int i = 0; i < 60; ++i) x.push_back(0.05 + 0.1 * (i % 7) / 7.0);  // the clean bulk, small losses
  for (int i = 0; i < 20; ++i) x.push_back(0.7 + 0.25 * (i % 5) / 5.0);  // the noisy tail
  const BicroBetaMixture m = fit_bicro_beta_mixture(x);
  EXPECT_NEAR(m.weight[0] + m.weight[1], 1.0, 1e-12);
  EXPECT_NEAR(m.weight[0], 0.75, 0.05);
  EXPECT_GT(m.posterior(0.1, 0), 0.99);
  EXPECT_LT(m.posterior(0.85, 0), 0.01);
  EXPECT_THROW(fit_bicro_beta_mixture({0.5}), Error);
}

TEST(BicroSplit, EqualLossesAreAllCleanAndTheFallbackThresholdFlagsSome) {
  const BicroSplit flat = bicro_split({0.3, 0.3, 0.3}, DType::Float64, 0.5, BicroFit::Bmm, 0);
  EXPECT_EQ(flat.clean, std::vector<uint8_t>(3, 1));
  // 180 small losses spread over [0.1, 0.28) and 20 large ones over [1.5, 1.9).
  std::vector<double> l;
  for (int i = 0; i < 200; ++i) l.push_back(i < 20 ? 1.5 + 0.02 * i : 0.1 + 0.001 * i);
  const BicroSplit s = bicro_split(l, DType::Float64, 0.5, BicroFit::Bmm, 0);
  int64_t clean_small = 0, clean_large = 0;
  for (size_t i = 0; i < l.size(); ++i) (i < 20 ? clean_large : clean_small) += s.clean[i];
  EXPECT_EQ(clean_large, 0);
  EXPECT_GE(clean_small, 160);  // 166: the mixture's clean component ends a little short of the small losses' top
  // The smallest loss (x = 0) has a posterior of 0 or NaN under any fitted Beta mixture (the density at 0 is 0, or
  // infinite in both components): it is never clean, and `split_prob`'s fallback (every posterior above the
  // threshold) never applies to the Beta mixture.
  EXPECT_EQ(s.clean[20], 0);
  const BicroSplit tiny = bicro_split(l, DType::Float64, 1e-300, BicroFit::Bmm, 0);
  EXPECT_EQ(tiny.clean[20], 0);
  // With the Gaussian mixture it does: the ⌊200/100⌋-th smallest posterior becomes the threshold.
  const BicroSplit fallback = bicro_split(l, DType::Float64, 1e-300, BicroFit::Gmm, 1);
  int64_t noisy = 0;
  for (uint8_t c : fallback.clean) noisy += c == 0;
  EXPECT_GE(noisy, 3);
  EXPECT_LT(noisy, 200);
  const BicroSplit g = bicro_split(l, DType::Float64, 0.5, BicroFit::Gmm, 1);
  for (size_t i = 0; i < 20; ++i) EXPECT_EQ(g.clean[i], 0) << i;
}

// S with known per-pair losses: a diagonal of ones and small off-diagonal scores make every pair's loss 0 but
// pair j's, whose diagonal is lowered by j·0.01 for j in `lowered`.
Tensor scores_with_low_pairs(int64_t n, const std::vector<int64_t>& lowered) {
  std::vector<double> s(static_cast<size_t>(n * n), 0.1);
  for (int64_t i = 0; i < n; ++i) s[static_cast<size_t>(i * n + i)] = 0.9;
  for (int64_t j : lowered) s[static_cast<size_t>(j * n + j)] = 0.25 - 0.01 * static_cast<double>(j);
  return from_vector(s, {n, n});
}

TEST(BicroAnchors, AreTheFloorTenthPlusOneOfLargestConfidence) {
  // 12 pairs: ⌊12/10⌋ + 1 = 2 anchors. All but pairs 3 and 7 have loss 0 (p = α) and tie: the last two of the
  // stable increasing order are the anchors; pairs 7 and 3 come first (the lowest p, 7's lower than 3's).
  const BicroAnchors a = bicro_anchors(scores_with_low_pairs(12, {3, 7}), 0.2);
  ASSERT_EQ(a.anchors.size(), 2u);
  ASSERT_EQ(a.noisy.size(), 10u);
  EXPECT_EQ(a.noisy[0], 7);
  EXPECT_EQ(a.noisy[1], 3);
  EXPECT_EQ(a.anchors, (std::vector<int64_t>{10, 11}));
  EXPECT_THROW(bicro_anchors(zeros({2, 3}, DType::Float64), 0.2), Error);
}

BicroGlobal global(std::vector<double> image, std::vector<double> text, int64_t dim) {
  BicroGlobal g;
  g.rows = static_cast<int64_t>(image.size()) / dim;
  g.dim = dim;
  g.image = std::move(image);
  g.text = std::move(text);
  return g;
}

TEST(BicroConsistency, UsesTheNearestAnchorOfEachModalityAndTheRatioBelowOne) {
  // Anchors 0 (x axis) and 1 (y axis) in both modalities. Pair 2's image is nearest anchor 0 (cos 0.8 vs 0.6);
  // its text is nearest anchor 1 (cos 0.9 vs ~0.436).
  const double s = std::sqrt(1 - 0.81);
  const BicroGlobal g = global({1, 0, 0, 1, 0.8, 0.6}, {1, 0, 0, 1, s, 0.9}, 2);
  const auto d = bicro_consistency(g, {0, 1}, g);
  ASSERT_EQ(d.size(), 3u);
  // i→t: anchor 0, c_v = 0.8, c_t = s: s/0.8 < 1.  t→i: anchor 1, c_t = 0.9, c_v = 0.6: 0.6/0.9.
  EXPECT_NEAR(d[2][0], s / 0.8, 1e-15);
  EXPECT_NEAR(d[2][1], 0.6 / 0.9, 1e-15);
  EXPECT_NEAR(d[0][0], 1.0, 1e-15);  // an anchor against itself
}

TEST(BicroLabels, TheKthNonAnchorGetsTheKthPairsValueAsTheCodeScatters) {
  // 12 pairs, anchors 10 and 11; noisy order 7, 3, 0, 1, 2, 4, 5, 6, 8, 9. Pair k's consistency differs per pair.
  const int64_t n = 12;
  std::vector<double> img, txt;
  for (int64_t i = 0; i < n; ++i) {
    const double a = 0.05 * static_cast<double>(i);
    img.insert(img.end(), {std::cos(a), std::sin(a)});
    txt.insert(txt.end(), {std::cos(2 * a), std::sin(2 * a)});
  }
  const BicroGlobal g = global(img, txt, 2);
  const Tensor S = scores_with_low_pairs(n, {3, 7});
  const BicroLabels r = bicro_labels(S, g, &g, 0.2, 0.0);
  const auto d = bicro_consistency(g, {10, 11}, g);
  const std::vector<int64_t> noisy = {7, 3, 0, 1, 2, 4, 5, 6, 8, 9};
  ASSERT_EQ(r.anchors.noisy, noisy);
  EXPECT_EQ(r.labeled[10], 1.0);
  EXPECT_EQ(r.labeled[11], 1.0);
  for (size_t k = 0; k < noisy.size(); ++k)
    EXPECT_NEAR(r.labeled[static_cast<size_t>(noisy[k])], 0.5 + (d[k][0] + d[k][1]) / 4, 1e-15) << k;
  // Pair 7 gets pair 0's value, not its own.
  EXPECT_NE(r.labeled[7], 0.5 + (d[7][0] + d[7][1]) / 4);
  for (int64_t j = 0; j < n; ++j)
    EXPECT_NEAR(r.unlabeled[static_cast<size_t>(j)], std::clamp((d[j][0] + d[j][1]) / 2, 0.0, 1.0), 1e-15);
  // --noise_tem sets the labels at most it to 0.
  const BicroLabels t = bicro_labels(S, g, &g, 0.2, 0.999);
  for (double y : t.unlabeled) EXPECT_TRUE(y == 0.0 || y > 0.999) << y;
  EXPECT_EQ(bicro_labels(S, g, nullptr, 0.2, 0.0).unlabeled.size(), 0u);
}

TEST(BicroMargins, AreTheLabelsOfTheColumns) {
  const Tensor M = bicro_margins({0.0, 0.5, 1.0}, 0.2, SoftMargin::Exponential, DType::Float64, Device::cpu());
  const std::vector<double> m = M.to_vector<double>();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(m[static_cast<size_t>(i * 3)], 0.0);
    EXPECT_NEAR(m[static_cast<size_t>(i * 3 + 1)], 0.2 * (std::sqrt(10.0) - 1) / 9, 1e-16);
    EXPECT_NEAR(m[static_cast<size_t>(i * 3 + 2)], 0.2, 1e-16);
  }
}

TEST(BicroWarmupLoss, SumsTheSmallestShareOfPerPairLossesWithItsGradient) {
  const int64_t B = 7;
  Generator gen(5);
  const Tensor S = rand({B, B}, DType::Float64, Device::cpu(), &gen);
  const std::vector<double> l =
      losses::per_sample_split_loss(S, 0.2, losses::SplitLoss::Mean).to_vector<double>();
  std::vector<double> sorted = l;
  std::sort(sorted.begin(), sorted.end());
  // ⌊7·0.3⌋ = 2 smallest.
  EXPECT_NEAR(bicro_warmup_loss(S, 0.2, 0.3).item<double>(), sorted[0] + sorted[1], 1e-14);
  EXPECT_NEAR(bicro_warmup_loss(S, 0.2, 1.0).item<double>(), std::accumulate(l.begin(), l.end(), 0.0), 1e-14);
  EXPECT_EQ(bicro_warmup_loss(S, 0.2, 0.1).item<double>(), 0.0);  // ⌊0.7⌋ = 0 pairs
  const GradcheckResult g = gradcheck([](const TensorList& in) { return bicro_warmup_loss(in[0], 0.2, 0.5); }, {S});
  EXPECT_TRUE(g.ok) << g.message;
}

class BicroMethodTest : public test::TempDirTest {
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
    c.method = "bicro";
    c.data_path = path("pairs");
    c.data_name = "synth_precomp";
    c.noise_ratio = 0.5;
    c.batch_size = 8;
    BicroOptions& o = c.options<BicroOptions>();
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

// Warm-up: A's batches then B's; co-training epoch 0 (first half): one labelled step per iteration; epoch 1 (second
// half): the unlabelled step, then the labelled one.
TEST_F(BicroMethodTest, StepsTrainANetAtATimeAndTheSecondHalfStartsEachIterationUnlabelled) {
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(config(), log);
  auto& bicro = dynamic_cast<BicroMethod&>(*m);
  const EpochInfo warm = m->begin_epoch(0);
  EXPECT_EQ(warm.phase, "warmup");
  ASSERT_EQ(warm.steps, 30);  // 120 captions in batches of 8: 15 per net
  const Tensor b0 = clone(bicro.net(1).parameters()[0].detach());
  for (int64_t s = 0; s < 15; ++s) EXPECT_EQ(m->train_step(0, s).parts.count("warmup_A"), 1u);
  EXPECT_TRUE(test::all_close(bicro.net(1).parameters()[0], b0, 0, 0)) << "B must not move in A's steps";
  for (int64_t s = 15; s < 30; ++s) EXPECT_EQ(m->train_step(0, s).parts.count("warmup_B"), 1u);
  EXPECT_FALSE(test::all_close(bicro.net(1).parameters()[0], b0, 0, 0));
  m->end_epoch(0);

  const EpochInfo first = m->begin_epoch(1);
  EXPECT_EQ(first.phase, "co-train");
  ASSERT_EQ(bicro.probability(0).size(), 120u);
  for (const char* k : {"clean_size_A", "clean_size_B", "clean_precision_A", "clean_precision_B"})
    EXPECT_EQ(first.stats.count(k), 1u) << k;
  for (int64_t s = 0; s < first.steps; ++s) {
    const StepResult r = m->train_step(1, s);
    EXPECT_TRUE(r.parts.count("labeled_A") || r.parts.count("labeled_B")) << s;
    EXPECT_TRUE(bicro.labels_labeled().empty());
  }
  const EpochInfo second = m->begin_epoch(2);
  ASSERT_GT(second.steps, 0);
  EXPECT_EQ(second.steps % 2, 0);
  for (int64_t s = 0; s < second.steps; ++s) {
    const StepResult r = m->train_step(2, s);
    const bool unlabelled = r.parts.count("unlabeled_A") || r.parts.count("unlabeled_B");
    EXPECT_EQ(unlabelled, s % 2 == 0) << s;
    // Between an iteration's two steps the labelled batch's labels wait, each in [0, 1].
    EXPECT_EQ(bicro.labels_labeled().empty(), !unlabelled) << s;
    for (double y : bicro.labels_labeled()) EXPECT_TRUE(y >= 0 && y <= 1) << y;
  }
  EXPECT_FALSE(m->best_candidate(0));
  EXPECT_TRUE(m->best_candidate(1));
  const EvalResult v = m->validate();
  EXPECT_EQ(v.metrics.count("rsum_A"), 1u);
  const EvalResult t = m->test();
  EXPECT_NE(t.table.find("net B alone"), std::string::npos);
}

// What a data-parallel run's ranks compare at an epoch's start (Method::plan_splits, docs/distributed.md §4.2):
// nothing in the warm-up, then both nets' clean flags, each choosing its peer's batches.
TEST_F(BicroMethodTest, ThePlanSplitsAreBothNetsCleanFlags) {
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(config(), log);
  auto& net = dynamic_cast<BicroMethod&>(*m);
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

TEST_F(BicroMethodTest, BadFlagsAreRefusedByName) {
  const TrainConfig c = config();
  const std::vector<std::string> base = {"train", "--method", "bicro", "--data_path", c.data_path, "--data_name",
                                         "synth_precomp", "--dry_run"};
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--p_threshold", "1.5"}, {"--soft_margin", "cubic"}, {"--batch_size", "1"}, {"--warmup_rate", "0"},
           {"--warmup_rate", "1.5"}, {"--noise_tem", "1"}, {"--noise_tem", "-0.1"}, {"--fit_type", "kmeans"}}) {
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
