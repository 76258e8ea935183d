// train/mixture/gaussian_mixture.h: the two-component 1-D Gaussian mixture against scikit-learn 1.2's
// GaussianMixture(n_components=2, max_iter=10, tol=1e-2, reg_covar=5e-4) started from the labels of its own
// KMeans initialisation (tests/reference/mixture_reference.py, fixtures tests/fixtures/mixture/gmm_*): one fit
// that converges and one that stops at max_iter; our seeded 2-means; degenerate and bad input.
#include "train/mixture/gaussian_mixture.h"

#include <gtest/gtest.h>

#include <cmath>

#include "mixture_fixtures.h"
#include "test_util.h"

namespace rematch::mixture {
namespace {

using fixtures::fixture;
using fixtures::values;

std::vector<int> labels(const std::string& case_name) {
  const std::vector<int64_t> l = fixture(case_name, "labels").to_vector<int64_t>();
  return std::vector<int>(l.begin(), l.end());
}

// The C++ EM sums sequentially where NumPy uses BLAS and pairwise sums (1e-14 measured over ten iterations);
// 1e-12 keeps a margin while a formula slip shows at 1e-3 or more.
void check_against_sklearn(const std::string& c) {
  const GaussianMixtureResult r = fit_gaussian_mixture(values(c, "values"), labels(c));
  ASSERT_TRUE(r.fitted);
  const std::vector<double> means = values(c, "means"), variances = values(c, "variances"),
                            weights = values(c, "weights");
  for (int k = 0; k < 2; ++k) {
    EXPECT_NEAR(r.means[k], means[k], 1e-12 * std::max(1.0, std::fabs(means[k]))) << c << " mean " << k;
    EXPECT_NEAR(r.variances[k], variances[k], 1e-12 * variances[k]) << c << " variance " << k;
    EXPECT_NEAR(r.weights[k], weights[k], 1e-12) << c << " weight " << k;
  }
  EXPECT_EQ(r.iterations, fixture(c, "iterations").item<int64_t>()) << c;
  EXPECT_EQ(r.converged, fixture(c, "converged").item<uint8_t>() == 1) << c;
  EXPECT_NEAR(r.lower_bound, fixture(c, "lower_bound").item<double>(), 1e-12) << c;
  EXPECT_EQ(r.clean_component, fixture(c, "clean_component").item<int64_t>()) << c;
  EXPECT_TRUE(test::values_equal(from_vector(r.clean_probability), values(c, "clean_probability"), 1e-12)) << c;
  EXPECT_EQ(r.initial_labels, labels(c));
}

TEST(GaussianMixtureGolden, ConvergedSplit) { check_against_sklearn("gmm_split"); }
TEST(GaussianMixtureGolden, StopsAtMaxIterWithoutConverging) { check_against_sklearn("gmm_unconverged"); }

// Our seeded 2-means finds the same two clusters as scikit-learn's KMeans on well-separated losses, so the
// whole fit agrees (component order may differ; the clean posterior does not depend on it).
TEST(GaussianMixture, SeededTwoMeansMatchesOnSeparatedData) {
  const std::vector<double> v = values("gmm_split", "values");
  for (uint64_t seed : {0, 1, 2}) {
    const GaussianMixtureResult r = fit_gaussian_mixture(v, seed);
    EXPECT_TRUE(test::values_equal(from_vector(r.clean_probability), values("gmm_split", "clean_probability"), 1e-12))
        << seed;
    EXPECT_NEAR(r.means[r.clean_component], values("gmm_split", "means")[1], 1e-12) << seed;
  }
}

TEST(GaussianMixture, LogPdf) {
  GaussianMixtureResult r;
  r.means = {0.5, -1};
  r.variances = {4, 1};
  EXPECT_NEAR(r.log_pdf(0, 2.5), -0.5 * std::log(2 * M_PI * 4) - 0.5, 1e-14);
  EXPECT_NEAR(r.log_pdf(1, -1), -0.5 * std::log(2 * M_PI), 1e-14);
  EXPECT_THROWS_WITH(r.log_pdf(2, 0), "log_pdf", "component 2");
}

TEST(GaussianMixture, AllEqualValuesAreAllClean) {
  const GaussianMixtureResult r = fit_gaussian_mixture({0.2, 0.2, 0.2, 0.2}, 0);
  EXPECT_FALSE(r.fitted);
  EXPECT_EQ(r.clean_probability, (std::vector<double>{1, 1, 1, 1}));
}

TEST(GaussianMixture, RejectsBadInput) {
  EXPECT_THROWS_WITH(fit_gaussian_mixture(std::vector<double>{0.5}, 0), "fit_gaussian_mixture", "at least 2");
  EXPECT_THROWS_WITH(fit_gaussian_mixture({0.5, NAN}, 0), "fit_gaussian_mixture", "sample 1", "nan");
  EXPECT_THROWS_WITH(fit_gaussian_mixture({0.5, 0.1, 0.2}, std::vector<int>{0, 1}), "fit_gaussian_mixture",
                     "2 initial labels", "3 values");
  EXPECT_THROWS_WITH(fit_gaussian_mixture({0.5, 0.1}, std::vector<int>{0, 2}), "fit_gaussian_mixture",
                     "initial label 1", "is 2");
  GaussianMixtureOptions options;
  options.max_iterations = 0;
  EXPECT_THROWS_WITH(fit_gaussian_mixture({0.5, 0.1}, 0, options), "fit_gaussian_mixture", "max_iterations");
}

}  // namespace
}  // namespace rematch::mixture
