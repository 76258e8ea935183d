// CREAM's pieces (docs/methods/cream.md): the three sets of split_samples (§2.2), the criterion against its
// definition written out and its float64 gradient with a filter between the weights (§2.4), the per-pair InfoNCE loss
// and `predict` (§2.1), the step plan (§2: A's steps, then B's; clean, hard and noisy updates by stage) and the flags
// refused by name. The whole step against the official code is cream_golden_step_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <sstream>

#include "autograd/autograd.h"
#include "autograd/gradcheck.h"
#include "cli_runner.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/methods/cream/cream_losses.h"
#include "train/methods/cream/cream_method.h"
#include "train/methods/make_method.h"
#include "train/synth/pairs_world.h"

namespace rematch::train {
namespace {

TEST(CreamParts, CleanByBothHardByOneNoisyByNeither) {
  EXPECT_EQ(cream_parts({1, 1, 0, 0}, {1, 0, 1, 0}), (std::vector<uint8_t>{0, 1, 1, 2}));
  EXPECT_THROW(cream_parts({1}, {1, 0}), Error);
}

// The criterion of docs/methods/cream.md §2.4 written out entry by entry.
double refined_by_hand(const std::vector<double>& S, const std::vector<double>& y, int64_t B, double tau, double f) {
  auto s = [&](int64_t i, int64_t j) { return S[static_cast<size_t>(i * B + j)]; };
  double total = 0;
  for (int64_t i = 0; i < B; ++i)
    for (int64_t j = 0; j < B; ++j) {
      double row = 0, col = 0, off_row = 0, off_col = 0;
      for (int64_t k = 0; k < B; ++k) {
        row += std::exp(s(i, k) / tau);
        col += std::exp(s(k, j) / tau);
        if (k != i) off_row += s(i, k);
        if (k != j) off_col += s(k, j);
      }
      double wr = i == j ? 0 : (1 - y[i]) * s(i, j) / (off_row + 1e-6);
      double wc = i == j ? 0 : (1 - y[j]) * s(i, j) / (off_col + 1e-6);
      if (wr < f) wr = 0;
      if (wc < f) wc = 0;
      if (i == j) wr = wc = y[i];
      total += wr * -std::log(std::exp(s(i, j) / tau) / row) + wc * -std::log(std::exp(s(i, j) / tau) / col);
    }
  return total / static_cast<double>(B);
}

TEST(CreamRefinedLoss, IsItsDefinitionAndHasItsGradient) {
  Generator gen(3);
  const int64_t B = 4;
  const Tensor S = rand({B, B}, DType::Float64, Device::cpu(), &gen);
  const std::vector<double> y = {0.9, 0.2, 0.55, 0.05};
  for (double f : {0.0, 0.12, 0.3, 2.0}) {
    const double got = cream_refined_loss(S, y, 0.07, f).item<double>();
    EXPECT_NEAR(got, refined_by_hand(S.to_vector<double>(), y, B, 0.07, f), 1e-11 * std::abs(got)) << f;
    // The gradient reaches S through the weights too (not detached): checked at a point no weight sits on the filter.
    const GradcheckResult g = gradcheck([&](const TensorList& in) { return cream_refined_loss(in[0], y, 0.2, f); }, {S});
    EXPECT_TRUE(g.ok) << f << ": " << g.message;
  }
  // Filters that keep all, some and none of the negative weights give three different losses.
  const double all = cream_refined_loss(S, y, 0.07, 0.0).item<double>();
  const double some = cream_refined_loss(S, y, 0.07, 0.12).item<double>();
  const double none = cream_refined_loss(S, y, 0.07, 2.0).item<double>();
  EXPECT_GT(std::abs(all - some), 1e-3);
  EXPECT_GT(std::abs(some - none), 1e-3);
  EXPECT_THROW(cream_refined_loss(S, {0.5}, 0.07, 0.0), Error);
  EXPECT_THROW(cream_refined_loss(S, y, 0.0, 0.0), Error);
}

TEST(CreamInfoNce, PerPairLossAndPrediction) {
  const int64_t B = 3;
  const std::vector<double> s = {0.9, 0.2, 0.4, 0.3, 0.8, 0.1, 0.5, 0.6, 0.7};
  const Tensor S = from_vector(s, {B, B});
  const std::vector<double> l = cream_infonce_per_pair(S, 0.1).to_vector<double>();
  const std::vector<double> p = cream_predict(S, 0.1);
  for (int64_t i = 0; i < B; ++i) {
    double row = 0, col = 0;
    for (int64_t k = 0; k < B; ++k) {
      row += std::exp(s[i * B + k] / 0.1);
      col += std::exp(s[k * B + i] / 0.1);
    }
    const double d = std::exp(s[i * B + i] / 0.1);
    EXPECT_NEAR(l[i], -std::log(d / row) - std::log(d / col), 1e-13);
    EXPECT_NEAR(p[i], (d / row + d / col) / 2, 1e-15);
  }
  Tensor x = S.detach();
  const GradcheckResult g = gradcheck([&](const TensorList& in) { return mean(cream_infonce_per_pair(in[0], 0.1)); }, {x});
  EXPECT_TRUE(g.ok) << g.message;
}

class CreamMethodTest : public test::TempDirTest {
 protected:
  TrainConfig config(int64_t hard_start, int64_t noisy_start) {
    synth::PairsWorldConfig w;
    w.train_images = 24;
    w.dev_images = 4;
    w.test_images = 4;
    w.regions = 3;
    w.feature_dim = 8;
    synth::write_pairs_world(synth::make_pairs_world(w), path("pairs"));
    TrainConfig c;
    c.method = "cream";
    c.data_path = path("pairs");
    c.data_name = "synth_precomp";
    c.noise_ratio = 0.5;
    c.batch_size = 8;
    CreamOptions& o = c.options<CreamOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
    o.hard_start_epoch = hard_start;
    o.noisy_start_epoch = noisy_start;
    c.warmup_epoch = 1;
    c.num_epochs = 2;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    return c;
  }
};

// Warm-up: A's batches then B's; co-training epoch 0 before the hard stage: clean steps only; epoch 1 with both
// stages on: clean, hard and noisy steps per iteration, each net's in turn.
TEST_F(CreamMethodTest, StepsFollowTheStages) {
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(config(1, 1), log);
  auto& cream = dynamic_cast<CreamMethod&>(*m);
  const EpochInfo warm = m->begin_epoch(0);
  EXPECT_EQ(warm.phase, "warmup");
  ASSERT_EQ(warm.steps, 30);  // 120 captions in batches of 8: 15 per net
  const Tensor b0 = clone(cream.net(1).parameters()[0].detach());
  for (int64_t s = 0; s < 15; ++s) EXPECT_EQ(m->train_step(0, s).parts.count("warmup_A"), 1u);
  EXPECT_TRUE(test::all_close(cream.net(1).parameters()[0], b0, 0, 0)) << "B must not move in A's steps";
  for (int64_t s = 15; s < 30; ++s) EXPECT_EQ(m->train_step(0, s).parts.count("warmup_B"), 1u);
  m->end_epoch(0);

  const EpochInfo first = m->begin_epoch(1);
  EXPECT_EQ(first.phase, "co-train");
  ASSERT_EQ(cream.parts().size(), 120u);
  for (const char* k : {"clean_size", "hard_size", "noisy_size", "clean_precision"})
    EXPECT_EQ(first.stats.count(k), 1u) << k;
  EXPECT_EQ(first.stats.at("clean_size") + first.stats.at("hard_size") + first.stats.at("noisy_size"), 120.0);
  for (int64_t s = 0; s < first.steps; ++s) {
    const StepResult r = m->train_step(1, s);
    EXPECT_TRUE(r.parts.count("clean_A") || r.parts.count("clean_B")) << s;
  }
  m->end_epoch(1);
  const EpochInfo second = m->begin_epoch(2);
  ASSERT_GT(second.steps, 0);
  int64_t counts[3] = {0, 0, 0};
  bool b_started = false;
  for (int64_t s = 0; s < second.steps; ++s) {
    const StepResult r = m->train_step(2, s);
    const std::string part = r.parts.begin()->first;
    const bool is_b = part.back() == 'B';
    EXPECT_FALSE(b_started && !is_b) << "A's steps come before B's";
    b_started = b_started || is_b;
    counts[part.rfind("clean", 0) == 0 ? 0 : part.rfind("hard", 0) == 0 ? 1 : 2]++;
  }
  // (This world's split at seed 0: 59 clean, 57 hard, 4 noisy pairs; 16 clean, 14 hard and 16 noisy steps.)
  EXPECT_GT(counts[1], 0);
  EXPECT_GT(counts[2], 0);
  EXPECT_GT(counts[0], 0);
  std::cout << "cream epoch 2: " << second.stats.at("clean_size") << " clean, " << second.stats.at("hard_size")
            << " hard, " << second.stats.at("noisy_size") << " noisy pairs; steps clean " << counts[0] << ", hard "
            << counts[1] << ", noisy " << counts[2] << "\n";
  EXPECT_FALSE(m->best_candidate(0));
  EXPECT_TRUE(m->best_candidate(1));
  const EvalResult v = m->validate();
  EXPECT_EQ(v.metrics.count("rsum_A"), 1u);
  const EvalResult t = m->test();
  EXPECT_NE(t.table.find("net B alone"), std::string::npos);
}

// What a data-parallel run's ranks compare at an epoch's start (Method::plan_splits, docs/distributed.md §4.2):
// nothing in the warm-up, then the clean, hard and noisy sets (0, 1, 2 per pair), not only the clean flags.
TEST_F(CreamMethodTest, ThePlanSplitIsTheThreeSets) {
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(config(1, 1), log);
  auto& cream = dynamic_cast<CreamMethod&>(*m);
  m->begin_epoch(0);
  EXPECT_TRUE(m->plan_splits(0).empty());
  m->begin_epoch(1);
  const std::vector<PlanSplit> p = m->plan_splits(1);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].what, "the clean, hard and noisy sets");
  EXPECT_EQ(p[0].split.kind, viz::SplitKind::label);
  ASSERT_EQ(p[0].split.values.size(), cream.parts().size());
  for (size_t j = 0; j < cream.parts().size(); ++j) EXPECT_EQ(p[0].split.values[j], cream.parts()[j]) << j;
}

TEST_F(CreamMethodTest, BadFlagsAreRefusedByName) {
  const TrainConfig c = config(10, 15);
  const std::vector<std::string> base = {"train", "--method", "cream", "--data_path", c.data_path, "--data_name",
                                         "synth_precomp", "--dry_run"};
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{{"--p_threshold", "1.5"},
                                                                                    {"--p_threshold", "0"},
                                                                                    {"--hard_start_epoch", "-1"},
                                                                                    {"--noisy_start_epoch", "3"},
                                                                                    {"--tau", "0"},
                                                                                    {"--batch_size", "1"}}) {
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
