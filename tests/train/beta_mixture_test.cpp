// train/mixture/beta_mixture.h: L2RM's Beta-mixture split (docs/methods/l2rm.md §1.3) against a NumPy transcription of
// the pomegranate fit L2RM runs (tests/reference/mixture_reference.py, fixtures tests/fixtures/mixture/bmm_*),
// started from the same k-means++ centres; the §1.11 checks (planted 0.7·Beta(1.5,12) + 0.3·Beta(8,2)
// data, method of moments on one Beta sample); the guards, the iteration cap and degenerate input.
#include "train/mixture/beta_mixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "mixture_fixtures.h"
#include "test_util.h"

namespace rematch::mixture {
namespace {

using fixtures::fixture;
using fixtures::values;

void expect_near_rel(double got, double want, double rtol, const std::string& what) {
  EXPECT_NEAR(got, want, rtol * std::max(1.0, std::fabs(want))) << what;
}

// Beta(a, b) draws as G_a / (G_a + G_b) from std::mt19937 (independent of the engine's RNG).
std::vector<double> beta_sample(double a, double b, size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::gamma_distribution<double> ga(a, 1.0), gb(b, 1.0);
  std::vector<double> x(n);
  for (double& v : x) {
    const double u = ga(gen), w = gb(gen);
    v = u / (u + w);
  }
  return x;
}

// The whole fit reproduces the transcription: both sum in the same order and call the same libm, so what is
// left is rounding the EM carries over tens of iterations (1e-14 measured); 1e-11 keeps a margin while any
// formula slip shows at 1e-3 or more.
void check_against_reference(const std::string& c) {
  BetaMixtureOptions options;
  const std::vector<double> centres = values(c, "centres");
  options.initial_centres = std::array<double, 2>{centres[0], centres[1]};
  const BetaMixtureResult r = fit_beta_mixture(values(c, "losses"), 0, options);
  ASSERT_TRUE(r.fitted);
  EXPECT_TRUE(test::values_equal(from_vector(r.x), values(c, "x"), 1e-15)) << c;
  const std::vector<double> initial = values(c, "initial"), final = values(c, "final");
  for (int k = 0; k < 2; ++k) {
    const std::string tag = c + " component " + std::to_string(k);
    expect_near_rel(r.initial_components[k].alpha, initial[3 * k], 1e-12, tag + " initial alpha");
    expect_near_rel(r.initial_components[k].beta, initial[3 * k + 1], 1e-12, tag + " initial beta");
    expect_near_rel(r.initial_components[k].weight, initial[3 * k + 2], 1e-15, tag + " initial weight");
    expect_near_rel(r.components[k].alpha, final[3 * k], 1e-11, tag + " alpha");
    expect_near_rel(r.components[k].beta, final[3 * k + 1], 1e-11, tag + " beta");
    expect_near_rel(r.components[k].weight, final[3 * k + 2], 1e-11, tag + " weight");
  }
  EXPECT_EQ(r.first_fit_iterations, fixture(c, "first_iterations").item<int64_t>()) << c;
  EXPECT_EQ(r.second_fit_iterations, fixture(c, "second_iterations").item<int64_t>()) << c;
  EXPECT_FALSE(r.hit_iteration_cap) << c;
  expect_near_rel(r.log_likelihood, fixture(c, "log_likelihood").item<double>(), 1e-11, c + " log-likelihood");
  EXPECT_EQ(r.clean_component, fixture(c, "clean_component").item<int64_t>()) << c;
  EXPECT_TRUE(test::values_equal(from_vector(r.clean_probability), values(c, "clean_probability"), 1e-11)) << c;
  std::vector<double> clean(r.clean.begin(), r.clean.end());
  EXPECT_EQ(clean, values(c, "clean")) << c;
}

TEST(BetaMixtureGolden, PlantedMixture) { check_against_reference("bmm_planted"); }
TEST(BetaMixtureGolden, OverlappingComponentsLongSecondFit) { check_against_reference("bmm_overlap"); }
TEST(BetaMixtureGolden, SmallSampleWithClampedExtremes) { check_against_reference("bmm_small"); }

// docs/methods/l2rm.md §1.11: on 0.7·Beta(1.5, 12) (clean) + 0.3·Beta(8, 2) losses, the low-mean component is the clean
// one and most of its samples get w_clean > 0.5 — from our own seeded k-means++, for several seeds.
TEST(BetaMixture, PlantedCleanComponentIsTheLowLossOne) {
  const std::vector<double> losses = values("bmm_planted", "losses");
  const std::vector<double> planted = values("bmm_planted", "planted_clean");
  for (uint64_t seed : {0, 1, 2, 3}) {
    const BetaMixtureResult r = fit_beta_mixture(losses, seed);
    const BetaComponent& clean = r.components[r.clean_component];
    const BetaComponent& noisy = r.components[1 - r.clean_component];
    EXPECT_LT(clean.alpha / (clean.alpha + clean.beta), noisy.alpha / (noisy.alpha + noisy.beta)) << seed;
    EXPECT_NEAR(clean.weight, 0.7, 0.03) << seed;
    size_t planted_clean = 0, kept = 0, agree = 0;
    for (size_t i = 0; i < losses.size(); ++i) {
      planted_clean += planted[i] == 1;
      kept += planted[i] == 1 && r.clean_probability[i] > 0.5;
      agree += (planted[i] == 1) == (r.clean[i] == 1);
    }
    EXPECT_GT(static_cast<double>(kept) / planted_clean, 0.97) << seed;
    EXPECT_GT(static_cast<double>(agree) / losses.size(), 0.95) << seed;
  }
}

TEST(BetaMixture, SeedReproducesTheFit) {
  const std::vector<double> losses = values("bmm_overlap", "losses");
  const BetaMixtureResult a = fit_beta_mixture(losses, 42), b = fit_beta_mixture(losses, 42);
  EXPECT_EQ(a.initial_centres, b.initial_centres);
  EXPECT_EQ(a.clean_probability, b.clean_probability);
  // The centres are two of the samples.
  const BetaMixtureResult c = fit_beta_mixture(losses, 43);
  for (double centre : c.initial_centres)
    EXPECT_NE(std::find(c.x.begin(), c.x.end(), centre), c.x.end());
}

// docs/methods/l2rm.md §1.11: the method of moments on one Beta(a, b) sample recovers (a, b) within sampling error
// (200k draws: the standard error of the estimates is below 1 %).
TEST(BetaMixture, MethodOfMomentsRecoversShape) {
  for (auto [a, b] : {std::pair<double, double>{1.5, 12}, {8, 2}, {0.7, 0.9}}) {
    const std::array<double, 2> fit = beta_method_of_moments(beta_sample(a, b, 200000, 7));
    EXPECT_NEAR(fit[0], a, 0.03 * a) << a << "," << b;
    EXPECT_NEAR(fit[1], b, 0.03 * b) << a << "," << b;
  }
  // Hand-worked: x = {0.2, 0.4}: m = 0.3, v = 0.01, a = 0.3·(0.21/0.01 − 1) = 6, b = 6·0.7/0.3 = 14; weights
  // {3, 3} change nothing, weights {1, 0} leave one point (variance 0 → the 1e-12 guard).
  const std::array<double, 2> hand = beta_method_of_moments({0.2, 0.4});
  EXPECT_NEAR(hand[0], 6, 1e-12);
  EXPECT_NEAR(hand[1], 14, 1e-12);
  EXPECT_EQ(beta_method_of_moments({0.2, 0.4}, {3, 3}), hand);
  const std::array<double, 2> point = beta_method_of_moments({0.2, 0.4}, {1, 0});
  EXPECT_NEAR(point[0], 0.2 * (0.16 / 1e-12 - 1), 1e-3 * point[0]);
  EXPECT_TRUE(std::isfinite(point[1]));
}

TEST(BetaMixture, ComponentDensity) {
  const BetaComponent c{2, 2, 1};
  EXPECT_NEAR(c.pdf(0.5), 1.5, 1e-14);  // Beta(2,2) = 6x(1−x)
  EXPECT_NEAR(c.pdf(0.25), 6 * 0.25 * 0.75, 1e-14);
  const BetaComponent u{0.5, 0.5, 1};  // arcsine density: infinite at 0 and 1 without the 1e-6 clamp
  EXPECT_NEAR(u.pdf(0.0), u.pdf(1e-6), 0);
  EXPECT_TRUE(std::isfinite(u.log_pdf(1.0)));
}

// Each cluster is one repeated value: the moment variance is 0 and the guards keep the shapes finite.
TEST(BetaMixture, ZeroVarianceClustersStayFinite) {
  const std::vector<double> losses = {1, 1, 1, 1, 5, 5, 5};
  const BetaMixtureResult r = fit_beta_mixture(losses, 0);
  for (const BetaComponent& c : r.components)
    EXPECT_TRUE(std::isfinite(c.alpha) && std::isfinite(c.beta) && c.alpha >= 1e-3 && c.beta >= 1e-3);
  EXPECT_EQ(std::vector<uint8_t>(r.clean.begin(), r.clean.end()), (std::vector<uint8_t>{1, 1, 1, 1, 0, 0, 0}));
}

TEST(BetaMixture, SecondFitCapIsReported) {
  BetaMixtureOptions options;
  const std::vector<double> centres = values("bmm_overlap", "centres");
  options.initial_centres = std::array<double, 2>{centres[0], centres[1]};
  options.second_max_iterations = 2;  // the reference needs 15
  const BetaMixtureResult r = fit_beta_mixture(values("bmm_overlap", "losses"), 0, options);
  EXPECT_TRUE(r.hit_iteration_cap);
  EXPECT_EQ(r.first_fit_iterations, 10);
  EXPECT_EQ(r.second_fit_iterations, 2);
}

TEST(BetaMixture, AllEqualLossesAreAllClean) {
  const BetaMixtureResult r = fit_beta_mixture({0.3, 0.3, 0.3}, 0);
  EXPECT_FALSE(r.fitted);
  EXPECT_EQ(r.clean_probability, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(r.clean, (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(r.x, (std::vector<double>{1e-3, 1e-3, 1e-3}));
}

TEST(BetaMixture, RejectsBadInput) {
  EXPECT_THROWS_WITH(fit_beta_mixture({0.5}, 0), "fit_beta_mixture", "at least 2", "got 1");
  EXPECT_THROWS_WITH(fit_beta_mixture({0.5, NAN, 0.2}, 0), "fit_beta_mixture", "sample 1", "nan");
  EXPECT_THROWS_WITH(fit_beta_mixture({0.5, 0.2, INFINITY}, 0), "fit_beta_mixture", "sample 2", "inf");
  BetaMixtureOptions options;
  options.first_max_iterations = -1;
  EXPECT_THROWS_WITH(fit_beta_mixture({0.5, 0.2}, 0, options), "fit_beta_mixture", "-1");
  options.first_max_iterations = 10;
  options.initial_centres = std::array<double, 2>{0.1, NAN};
  EXPECT_THROWS_WITH(fit_beta_mixture({0.5, 0.2}, 0, options), "fit_beta_mixture", "initial centres", "nan");
  EXPECT_THROWS_WITH(beta_method_of_moments({0.5, 1.0}), "beta_method_of_moments", "sample 1", "(0, 1)");
  EXPECT_THROWS_WITH(beta_method_of_moments({0.5, 0.2}, {0, 0}), "beta_method_of_moments", "positive");
  EXPECT_THROWS_WITH(beta_method_of_moments({0.5, 0.2}, {1}), "beta_method_of_moments", "1 weights", "2 samples");
}

}  // namespace
}  // namespace rematch::mixture
