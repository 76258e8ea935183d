// CRCL's pieces (docs/methods/crcl.md): the label rule (§9.2), the loss's tan and its gradient (§9.1), the
// augmentation's rates (§9.3), the rounds (§9.4: re-initialised model, per-round learning rate, the last round's
// model choice) and the flags refused by name. The whole step against the official code is
// crcl_golden_step_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "autograd/autograd.h"
#include "autograd/gradcheck.h"
#include "test_util.h"
#include "train/methods/crcl/crcl_augment.h"
#include "train/methods/crcl/crcl_loss.h"
#include "train/methods/crcl/crcl_method.h"
#include "train/methods/make_method.h"
#include "train/synth/pairs_world.h"

namespace rematch::train {
namespace {

TEST(CrclLabels, FrozenInWarmupMovingAverageAfterAndTheFloor) {
  const std::vector<double> y_last = {1.0, 0.5, 0.05, 0.0}, p = {0.2, 0.4, 0.1, 0.6};
  const CrclLabelRule rule;  // mc, confident, α = 0.8
  // Warm-up: the stored labels (floored: 0.05 < 0.1 → 0).
  EXPECT_EQ(crcl_targets(y_last, p, true, rule), (std::vector<double>{1.0, 0.5, 0.0, 0.0}));
  const std::vector<double> main = crcl_targets(y_last, p, false, rule);
  EXPECT_DOUBLE_EQ(main[0], 0.8 * 1.0 + 0.2 * 0.2);
  EXPECT_DOUBLE_EQ(main[1], 0.8 * 0.5 + 0.2 * 0.4);
  EXPECT_EQ(main[2], 0.0) << "0.8·0.05 + 0.2·0.1 = 0.06 < 0.1";
  EXPECT_DOUBLE_EQ(main[3], 0.12) << "0.2·0.6 = 0.12 stays";
  CrclLabelRule no_floor = rule;
  no_floor.confident = false;
  EXPECT_DOUBLE_EQ(crcl_targets(y_last, p, false, no_floor)[2], 0.8 * 0.05 + 0.2 * 0.1);
  CrclLabelRule no_mc = rule;
  no_mc.mc = false;
  EXPECT_EQ(crcl_targets(y_last, p, true, no_mc), p);
  EXPECT_EQ(crcl_targets(y_last, p, false, no_mc), p);
}

TEST(CrclLoss, TanIsTheLibraryTanWithItsDerivative) {
  std::vector<double> xs;
  for (int i = 0; i <= 100; ++i) xs.push_back(i / 100.0);
  const Tensor x = from_vector(xs, {101});
  const std::vector<double> t = crcl_tan(x).to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(t[i], std::tan(xs[i]), 4e-16 * (1 + std::tan(xs[i]))) << xs[i];
  const GradcheckResult g = gradcheck([](const TensorList& in) { return crcl_tan(in[0]); }, {x});
  EXPECT_TRUE(g.ok) << g.message;
}

// The loss as a function of S (labels fixed): its gradient against central differences in float64, for labels
// 0, 1 and between (the exponent 1 − y of the complementary term's denominator).
TEST(CrclLoss, GradientMatchesFiniteDifferences) {
  Generator gen(3);
  const Tensor S = rand({5, 5}, DType::Float64, Device::cpu(), &gen);
  const std::vector<double> y = {1.0, 0.0, 0.3, 0.75, 0.0};
  const GradcheckResult g = gradcheck(
      [&](const TensorList& in) { return crcl_loss(crcl_probabilities(in[0], 0.05), y); }, {S},
      GradcheckOptions{1e-6, 1e-6, 1e-5});
  EXPECT_TRUE(g.ok) << g.message;
}

// The loss at a uniform batch (all S equal, p = 1/B everywhere): direct term Σ y·2·log B / B, complementary term
// 2·5·mean over rows of (B−1)·tan(1/B) / (B·tan(1/B))^(1−y).
TEST(CrclLoss, UniformBatchHasTheClosedForm) {
  const int64_t B = 4;
  const Tensor S = full({B, B}, 0.5, DType::Float64);
  const std::vector<double> y = {1.0, 0.0, 0.5, 0.25};
  Scalars parts;
  const double loss = crcl_loss(crcl_probabilities(S, 0.05), y, &parts).item<double>();
  double direct = 0, comp = 0;
  const double t = std::tan(1.0 / B);
  for (double yi : y) {
    direct += yi * 2 * std::log(static_cast<double>(B)) / B;
    comp += 2 * (B - 1) * t / std::pow(B * t, 1 - yi) / B;
  }
  EXPECT_NEAR(parts["positive"], direct, 1e-9);  // ε = 1e-10 in the softmax's denominator
  EXPECT_NEAR(parts["negative"], 5 * comp, 1e-9);
  EXPECT_NEAR(loss, direct + 5 * comp, 1e-9);
}

TEST(CrclAugment, RatesOfTheOfficialDataPy) {
  Generator gen(11);
  // Captions: 200,000 tokens; kept 0.8, <mask> 0.1, a random word 0.02, deleted 0.08.
  const std::vector<int64_t> ids(1000, 7);
  int64_t total = 0, mask = 0, kept = 0, out = 0;
  for (int i = 0; i < 200; ++i) {
    const std::vector<int64_t> a = crcl_augment_caption(ids, 50, 49, gen);
    total += 1000;
    out += static_cast<int64_t>(a.size());
    for (int64_t w : a) {
      mask += w == 49;
      kept += w == 7;
    }
  }
  const double n = static_cast<double>(total);
  EXPECT_NEAR(mask / n, 0.1 + 0.02 / 50, 0.004);
  EXPECT_NEAR(kept / n, 0.8 + 0.02 / 50, 0.004);
  EXPECT_NEAR(1 - out / n, 0.08, 0.003) << "deleted";
  // Regions: 0.2 of them set to 1e-10 in every feature; the others unchanged.
  const Tensor regions = add(rand({100, 36, 3}, DType::Float32, Device::cpu(), &gen), 1.0);
  const std::vector<float> before = regions.to_vector<float>();
  const std::vector<float> after = crcl_augment_regions(regions, gen).to_vector<float>();
  int64_t dropped = 0;
  for (size_t r = 0; r < 3600; ++r) {
    const bool d = after[r * 3] == 1e-10f;
    dropped += d;
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(after[r * 3 + k], d ? 1e-10f : before[r * 3 + k]);
  }
  EXPECT_NEAR(dropped / 3600.0, 0.2, 0.02);
}

TEST(CrclAugment, BatchIsSortedByTheAugmentedLengthsWithItsIndices) {
  Generator gen(5);
  data::Batch b;
  const int64_t B = 8, L = 12;
  std::vector<int64_t> ids(static_cast<size_t>(B * L), 0), lengths;
  for (int64_t i = 0; i < B; ++i) {
    const int64_t n = L - i;
    lengths.push_back(n);
    for (int64_t t = 0; t < n; ++t) ids[static_cast<size_t>(i * L + t)] = 100 + i;  // caption i's words say i
  }
  b.captions = from_vector(ids, {B, L});
  b.lengths = from_vector(lengths, {B});
  std::vector<float> regions(static_cast<size_t>(B * 2 * 3));
  for (size_t k = 0; k < regions.size(); ++k) regions[k] = static_cast<float>(k / 6) + 1;  // image i: value i + 1
  b.regions = from_vector(regions, {B, 2, 3});
  b.caption_index = arange(B);
  b.image_index = arange(B);
  const data::Batch a = crcl_augment_batch(b, 200, 1, gen);
  const std::vector<int64_t> al = a.lengths.to_vector<int64_t>(), ci = a.caption_index.to_vector<int64_t>();
  const std::vector<int64_t> ai = a.captions.to_vector<int64_t>();
  const std::vector<float> ar = a.regions.to_vector<float>();
  for (int64_t k = 0; k < B; ++k) {
    if (k > 0) EXPECT_GE(al[static_cast<size_t>(k - 1)], al[static_cast<size_t>(k)]);
    const int64_t i = ci[static_cast<size_t>(k)];
    EXPECT_EQ(a.image_index.to_vector<int64_t>()[static_cast<size_t>(k)], i);
    int64_t own = 0;  // the row's kept words are caption i's
    for (int64_t t = 0; t < al[static_cast<size_t>(k)]; ++t) own += ai[static_cast<size_t>(k * a.captions.size(1) + t)] == 100 + i;
    EXPECT_GT(own, 0);
    for (int64_t j = 0; j < 6; ++j) {
      const float v = ar[static_cast<size_t>(k * 6 + j)];
      EXPECT_TRUE(v == static_cast<float>(i + 1) || v == 1e-10f) << v;
    }
  }
}

class CrclMethodTest : public test::TempDirTest {
 protected:
  TrainConfig config(const std::string& data) {
    synth::PairsWorldConfig w;
    w.train_images = 20;
    w.dev_images = 5;
    w.test_images = 5;
    w.regions = 3;
    w.feature_dim = 8;
    w.seed = 1;
    synth::write_pairs_world(synth::make_pairs_world(w), data);
    TrainConfig c;
    c.method = "crcl";
    c.data_path = data;
    c.data_name = w.data_name;
    c.noise_ratio = 0.4;
    c.batch_size = 16;
    CrclOptions& o = c.options<CrclOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
    o.schedules = {2, 3};
    c.warmup_epoch = 1;
    c.lr_update = 2;
    c.learning_rate = 1e-3;
    c.max_steps = 2;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    return c;
  }
};

TEST_F(CrclMethodTest, RoundsRestartTheModelAndTheLearningRate) {
  const TrainConfig c = config(path("data"));
  EXPECT_EQ(c.num_epochs, 5) << "the sum of --schedules";
  EXPECT_EQ(c.options<CrclOptions>().tau, 0.05);
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(c, log);
  auto& crcl = dynamic_cast<CrclMethod&>(*m);
  ASSERT_EQ(crcl.num_epochs(), 7) << "2 rounds × 1 warm-up + 5";
  // Epochs 0..2 are round 0 (warm-up, 2 main), 3..6 round 1 (warm-up, 3 main).
  const std::vector<std::string> phases = {"warmup", "main", "main", "warmup", "main", "main", "main"};
  const std::vector<double> lrs = {1e-3, 1e-3, 1e-4, 1e-3, 1e-3, 1e-4, 1e-4};
  Tensor weights_before_round_1;
  for (int64_t e = 0; e < 7; ++e) {
    if (e == 3) weights_before_round_1 = clone(crcl.model().parameters()[0]).detach();
    const EpochInfo info = crcl.begin_epoch(e);
    EXPECT_EQ(info.phase, phases[static_cast<size_t>(e)]) << e;
    EXPECT_NEAR(crcl.learning_rate(), lrs[static_cast<size_t>(e)], 1e-15) << e;
    EXPECT_EQ(crcl.best_candidate(e), e >= 3) << "only the last round competes (" << e << ")";
    if (e == 3) {
      // A fresh model: other weights, fresh AdamW moments.
      EXPECT_GT(sum(abs(sub(crcl.model().parameters()[0], weights_before_round_1))).item<double>(), 1e-3);
    }
    for (int64_t s = 0; s < std::min<int64_t>(2, info.steps); ++s) crcl.train_step(e, s);
    crcl.end_epoch(e);
    if (e == 0) {
      // The first round's last warm-up epoch replaced the labels it saw by p (< 1 for B ≥ 2).
      int64_t changed = 0;
      for (double y : crcl.labels()) changed += y < 1.0;
      EXPECT_EQ(changed, 32) << "2 batches of 16";
    }
  }
  EXPECT_NE(log.str().find("crcl: 2 round(s)"), std::string::npos) << log.str();
}

TEST_F(CrclMethodTest, BadFlagsAreRefusedByName) {
  const TrainConfig good = config(path("data"));
  auto refused = [&](const std::function<void(TrainConfig&)>& change, std::vector<std::string> parts) {
    TrainConfig c = good;
    change(c);
    EXPECT_THROWS_WITH(check_config(c), parts);
  };
  refused([](TrainConfig& c) { c.options<CrclOptions>().alpha = 1.5; }, {"--alpha"});
  refused([](TrainConfig& c) { c.options<CrclOptions>().schedules = {3, 0}; }, {"--schedules"});
  refused([](TrainConfig& c) { c.options<CrclOptions>().schedules = {}; }, {"--schedules"});
  refused([](TrainConfig& c) { c.num_epochs = 9; }, {"--num_epochs", "--schedules"});
  refused([](TrainConfig& c) { c.options<CrclOptions>().weight_decay = -1; }, {"--weight_decay"});
  refused([](TrainConfig& c) { c.options<CrclOptions>().tau = 0; }, {"--tau"});
}

}  // namespace
}  // namespace rematch::train
