#include "train/mixture/gaussian_mixture.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "train/mixture/two_means.h"

namespace rematch::mixture {

namespace {

const double kLog2Pi = std::log(2 * 3.141592653589793);  // np.log(2 * np.pi)
// sklearn _estimate_gaussian_parameters: nk = resp.sum(0) + 10 * np.finfo(float64).eps.
constexpr double kCountFloor = 10 * std::numeric_limits<double>::epsilon();

using Responsibilities = std::vector<std::array<double, 2>>;

// _estimate_gaussian_parameters (covariance 'full', one feature); returns nk.
std::array<double, 2> estimate_parameters(const std::vector<double>& x, const Responsibilities& resp,
                                          double reg_covar, GaussianMixtureResult& p) {
  std::array<double, 2> nk{};
  for (int k = 0; k < 2; ++k) {
    double count = 0, weighted = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      count += resp[i][k];
      weighted += resp[i][k] * x[i];
    }
    nk[k] = count + kCountFloor;
    p.means[k] = weighted / nk[k];
    double spread = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double diff = x[i] - p.means[k];
      spread += resp[i][k] * diff * diff;
    }
    p.variances[k] = spread / nk[k] + reg_covar;
  }
  return nk;
}

// log π_k + log N(x; μ_k, σ²_k) as _estimate_weighted_log_prob: with the precision Cholesky factor
// c = 1/√σ², y = x·c − μ·c and log N = −½(log 2π + y²) + log c.
std::array<double, 2> weighted_log_prob(const GaussianMixtureResult& p, double x) {
  std::array<double, 2> out{};
  for (int k = 0; k < 2; ++k) out[k] = p.log_pdf(k, x) + std::log(p.weights[k]);
  return out;
}

// scipy.special.logsumexp of two values.
double logsumexp2(const std::array<double, 2>& a) {
  const double m = std::max(a[0], a[1]);
  return std::log(std::exp(a[0] - m) + std::exp(a[1] - m)) + m;
}

// E-step: responsibilities and the mean log-likelihood.
double e_step(const std::vector<double>& x, const GaussianMixtureResult& p, Responsibilities& resp) {
  double total = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const std::array<double, 2> w = weighted_log_prob(p, x[i]);
    const double norm = logsumexp2(w);
    resp[i] = {std::exp(w[0] - norm), std::exp(w[1] - norm)};
    total += norm;
  }
  return total / static_cast<double>(x.size());
}

GaussianMixtureResult fit_from_labels(const std::vector<double>& x, std::vector<int> labels,
                                      const GaussianMixtureOptions& options) {
  REMATCH_CHECK(options.max_iterations >= 1 && options.tolerance >= 0 && options.reg_covar >= 0,
                "fit_gaussian_mixture: need max_iterations >= 1, tolerance >= 0 and reg_covar >= 0, got ",
                options.max_iterations, ", ", options.tolerance, " and ", options.reg_covar);
  GaussianMixtureResult p;
  Responsibilities resp(x.size(), {0, 0});
  for (size_t i = 0; i < x.size(); ++i) resp[i][labels[i]] = 1;
  p.initial_labels = std::move(labels);

  // GaussianMixture._initialize: weights = nk / N.
  const std::array<double, 2> nk = estimate_parameters(x, resp, options.reg_covar, p);
  for (int k = 0; k < 2; ++k) p.weights[k] = nk[k] / static_cast<double>(x.size());

  double lower_bound = -std::numeric_limits<double>::infinity();
  for (p.iterations = 1; p.iterations <= options.max_iterations; ++p.iterations) {
    const double previous = lower_bound;
    lower_bound = e_step(x, p, resp);
    const std::array<double, 2> counts = estimate_parameters(x, resp, options.reg_covar, p);
    for (int k = 0; k < 2; ++k) p.weights[k] = counts[k] / (counts[0] + counts[1]);
    if (std::fabs(lower_bound - previous) < options.tolerance) {
      p.converged = true;
      break;
    }
  }
  p.iterations = std::min(p.iterations, options.max_iterations);
  p.lower_bound = lower_bound;
  REMATCH_CHECK(std::isfinite(lower_bound) && std::isfinite(p.means[0]) && std::isfinite(p.means[1]) &&
                    std::isfinite(p.variances[0]) && std::isfinite(p.variances[1]),
                "fit_gaussian_mixture: EM ended with non-finite values (lower bound ", lower_bound, ", means ",
                p.means[0], ", ", p.means[1], ", variances ", p.variances[0], ", ", p.variances[1], ") on ",
                x.size(), " samples");

  p.clean_component = p.means[1] < p.means[0] ? 1 : 0;
  e_step(x, p, resp);  // predict_proba under the final parameters
  p.clean_probability.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) p.clean_probability[i] = resp[i][p.clean_component];
  return p;
}

GaussianMixtureResult degenerate(size_t n) {
  GaussianMixtureResult p;
  p.fitted = false;
  p.clean_probability.assign(n, 1.0);
  p.initial_labels.assign(n, 0);
  return p;
}

}  // namespace

double GaussianMixtureResult::log_pdf(int k, double x) const {
  REMATCH_CHECK(k == 0 || k == 1, "GaussianMixtureResult::log_pdf: component ", k, " is not 0 or 1");
  const double prec = 1 / std::sqrt(variances[k]);
  const double y = x * prec - means[k] * prec;
  return -0.5 * (kLog2Pi + y * y) + std::log(prec);
}

GaussianMixtureResult fit_gaussian_mixture(const std::vector<double>& values, uint64_t seed,
                                           const GaussianMixtureOptions& options) {
  check_samples("fit_gaussian_mixture", values);
  if (all_equal(values)) return degenerate(values.size());
  REMATCH_CHECK(options.max_kmeans_updates >= 1, "fit_gaussian_mixture: max_kmeans_updates must be >= 1, got ",
                options.max_kmeans_updates);
  Generator gen(seed);
  std::array<double, 2> centres = kmeans_plus_plus(values, gen);
  return fit_from_labels(values, lloyd(values, centres, options.max_kmeans_updates), options);
}

GaussianMixtureResult fit_gaussian_mixture(const std::vector<double>& values, const std::vector<int>& initial_labels,
                                           const GaussianMixtureOptions& options) {
  check_samples("fit_gaussian_mixture", values);
  REMATCH_CHECK(initial_labels.size() == values.size(), "fit_gaussian_mixture: ", initial_labels.size(),
                " initial labels for ", values.size(), " values");
  for (size_t i = 0; i < initial_labels.size(); ++i)
    REMATCH_CHECK(initial_labels[i] == 0 || initial_labels[i] == 1, "fit_gaussian_mixture: initial label ", i,
                  " is ", initial_labels[i], ", not 0 or 1");
  if (all_equal(values)) return degenerate(values.size());
  return fit_from_labels(values, initial_labels, options);
}

}  // namespace rematch::mixture
