// BiCro's split of the last epoch of `rematch demo --methods triplet,bicro` (seed 0, CPU), against the official
// fitting code on the same numbers (docs/methods/bicro.md §3.1). That split kept 4 of 2,500 pairs (precision 0.25):
// tests/reference/bicro_split_official.py ran the official `co_train.py: eval_train` (fit_type "gmm", the run's, and
// "bmm", the scripts') and `split_prob` in float64 on the per-pair losses rematch fitted there
// (tests/fixtures/golden_steps/bicro_demo_split/), and the official code keeps the same 4 pairs (for every one of 20
// KMeans starts). The collapse is the method's own: after the co-training epochs every score lies within a hundredth
// of the others, far inside the margin, so every hinge of every pair is active and each pair's loss is
// 2α(B − 1)/B = 0.3875 less a sliver; min-max normalisation puts almost every pair near 1 and the mixture's low
// component holds only the few pairs far below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "golden_step_util.h"
#include "train/methods/bicro/bicro_method.h"

namespace rematch::train {
namespace {

const char* const kFixture = "bicro_demo_split";

std::vector<double> fixture_doubles(const std::string& name) {
  return to(test::golden(kFixture, name), DType::Float64).to_vector<double>();
}
std::vector<int64_t> fixture_flags(const std::string& name) {
  return test::golden(kFixture, name).to_vector<int64_t>();
}
std::vector<int64_t> flags(const std::vector<uint8_t>& c) { return {c.begin(), c.end()}; }

// The run's split: the Gaussian mixture (`run.py --fit_type gmm`, the demo's), seeded as BicroMethod::begin_epoch
// seeds it at epoch 8 (--seed 0 + 2·8 + k).
TEST(BicroDemoSplit, TheGaussianMixtureKeepsTheSameFourPairsAsTheOfficialCode) {
  const std::vector<int64_t> truth = fixture_flags("truly_clean");
  for (int k = 0; k < 2; ++k) {
    const std::string n = k == 0 ? "A" : "B";
    const std::vector<double> losses = fixture_doubles(n + ".losses");
    ASSERT_EQ(losses.size(), 2500u);
    // The losses' shape: all within 0.1 of 2α(B − 1)/B (α 0.2, batch 32), the median within 0.002 of it.
    std::vector<double> sorted = losses;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_GT(sorted.front(), 0.3875 - 0.1) << n;
    EXPECT_LT(sorted.back(), 0.3875 + 0.1) << n;
    EXPECT_NEAR(sorted[sorted.size() / 2], 0.3875, 0.002) << n;

    const BicroSplit s = bicro_split(losses, DType::Float64, 0.5, BicroFit::Gmm, 16 + static_cast<uint64_t>(k));
    test::expect_golden_tensor(from_vector(s.normalised), test::golden(kFixture, n + ".normalised"),
                               n + " normalised losses");
    const double worst = test::expect_golden_tensor(
        from_vector(s.probability), test::golden(kFixture, n + ".gmm.probability"), n + " clean posterior");
    std::cout << n << ": largest |posterior - official| " << worst << "\n";
    const std::vector<int64_t> want = fixture_flags(n + ".gmm.clean");
    EXPECT_EQ(flags(s.clean), want) << n << " clean flags";
    EXPECT_EQ(std::count(want.begin(), want.end(), 1), 4) << n;
    int64_t truly = 0;
    for (size_t i = 0; i < want.size(); ++i) truly += want[i] * truth[i];
    EXPECT_EQ(truly, 1) << n << ": precision 0.25";
    // In float32, as the run normalised them: the flags the demo's run had, the same.
    const BicroSplit f32 = bicro_split(losses, DType::Float32, 0.5, BicroFit::Gmm, 16 + static_cast<uint64_t>(k));
    EXPECT_EQ(flags(f32.clean), fixture_flags(n + ".run_clean")) << n;
    EXPECT_EQ(flags(f32.clean), want) << n;
  }
}

// The scripts' Beta mixture (`--fit_type bmm`) on the same losses collapses too (7 and 17 pairs), as the official
// BetaMixture1D does: another fit is no way out.
TEST(BicroDemoSplit, TheBetaMixtureCollapsesAsTheOfficialOne) {
  for (int k = 0; k < 2; ++k) {
    const std::string n = k == 0 ? "A" : "B";
    const BicroSplit s = bicro_split(fixture_doubles(n + ".losses"), DType::Float64, 0.5, BicroFit::Bmm, 0);
    const std::vector<int64_t> want = fixture_flags(n + ".bmm.clean");
    EXPECT_EQ(flags(s.clean), want) << n << " clean flags";
    EXPECT_LT(std::count(want.begin(), want.end(), 1), 20) << n;
    const std::vector<double> want_p = fixture_doubles(n + ".bmm.probability");
    ASSERT_EQ(s.probability.size(), want_p.size());
    double worst = 0;
    for (size_t i = 0; i < want_p.size(); ++i) {
      EXPECT_EQ(std::isnan(s.probability[i]), std::isnan(want_p[i])) << n << " posterior " << i;
      if (!std::isnan(want_p[i])) worst = std::max(worst, std::abs(s.probability[i] - want_p[i]));
    }
    EXPECT_LT(worst, 1e-9) << n;
    std::cout << n << ": " << std::count(want.begin(), want.end(), 1) << " clean; largest |posterior - official| "
              << worst << "\n";
  }
}

}  // namespace
}  // namespace rematch::train
