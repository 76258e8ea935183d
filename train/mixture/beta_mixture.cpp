#include "train/mixture/beta_mixture.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "train/mixture/two_means.h"

namespace rematch::mixture {

namespace {

constexpr double kMinVariance = 1e-12;        // guard, see the header
constexpr double kMinShape = 1e-3;            // guard, see the header
constexpr double kPdfEps = 1e-6;              // TrueBetaDistribution x_eps
constexpr double kMinResponsibility = 1e-8;   // TrueBetaDistribution.from_summaries: below it, no update
constexpr double kInf = std::numeric_limits<double>::infinity();

// Sufficient statistics of one component (TrueBetaDistribution.summaries): Σ w, Σ w·x, Σ w·x·x.
struct Moments {
  double w = 0, sx = 0, sxx = 0;
  void add(double weight, double x) {
    w += weight;
    sx += weight * x;
    sxx += weight * x * x;
  }
};

std::array<double, 2> shape_from_moments(const Moments& s) {
  const double m = s.sx / s.w;
  const double v = std::max(s.sxx / s.w - s.sx * s.sx / (s.w * s.w), kMinVariance);
  const double a = m * ((m * (1 - m)) / v - 1);
  const double b = a * (1 - m) / m;
  return {std::max(a, kMinShape), std::max(b, kMinShape)};
}

// log(e^x + e^y) as pomegranate's utils.pyx pair_lse.
double pair_lse(double x, double y) {
  if (x == kInf || y == kInf) return kInf;
  if (x == -kInf) return y;
  if (y == -kInf) return x;
  if (x > y) return x + std::log(std::exp(y - x) + 1);
  return y + std::log(std::exp(x - y) + 1);
}

// Unnormalised log posteriors log π_j + log p_j(x).
std::array<double, 2> joint_log(const std::array<BetaComponent, 2>& c, double x) {
  return {c[0].log_pdf(x) + std::log(c[0].weight), c[1].log_pdf(x) + std::log(c[1].weight)};
}

// The mixture's state across the two fit calls: parameters plus the statistics an E-step leaves for the next
// M-step (GeneralMixtureModel.summarize / from_summaries).
struct Model {
  std::array<BetaComponent, 2> components;
  std::array<Moments, 2> stats;

  double e_step(const std::vector<double>& x) {
    double log_likelihood = 0;
    for (double xi : x) {
      const std::array<double, 2> r = joint_log(components, xi);
      const double total = pair_lse(r[0], r[1]);
      for (int j = 0; j < 2; ++j) stats[j].add(std::exp(r[j] - total), xi);
      log_likelihood += total;
    }
    return log_likelihood;
  }

  void m_step() {
    const double total = stats[0].w + stats[1].w;
    for (int j = 0; j < 2; ++j) {
      components[j].weight = stats[j].w / total;
      if (stats[j].w < kMinResponsibility) continue;  // pomegranate keeps the parameters and the statistics
      const std::array<double, 2> ab = shape_from_moments(stats[j]);
      components[j].alpha = ab[0];
      components[j].beta = ab[1];
      stats[j] = Moments{};
    }
  }
};

struct FitOutcome {
  int m_steps = 0;
  bool hit_cap = false;
  double log_likelihood = 0;
};

// One GeneralMixtureModel.fit call (docs/methods/l2rm.md §1.3 item 4).
FitOutcome fit_call(Model& model, const std::vector<double>& x, int max_iterations, double stop_threshold) {
  double improvement = kInf, last = 0;
  int iteration = 0;
  while (improvement > stop_threshold && iteration < max_iterations + 1) {
    if (iteration > 0) model.m_step();
    const double log_likelihood = model.e_step(x);
    if (iteration > 0) improvement = log_likelihood - last;
    ++iteration;
    last = log_likelihood;
  }
  model.stats = {};  // clear_summaries: the last E-step's statistics are not used
  return {iteration - 1, improvement > stop_threshold, last};
}

std::vector<double> normalise(const std::vector<double>& losses) {
  const auto [lo, hi] = std::minmax_element(losses.begin(), losses.end());
  const double min = *lo, range = *hi - *lo;
  std::vector<double> x(losses.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = range > 0 ? (losses[i] - min) / range : 0;
    if (x[i] >= 1) x[i] = 1 - kBetaMixtureFloor;
    if (x[i] <= 0) x[i] = kBetaMixtureFloor;
  }
  return x;
}

}  // namespace

double BetaComponent::log_pdf(double x) const {
  const double xc = std::min(std::max(x, kPdfEps), 1 - kPdfEps);
  return (alpha - 1) * std::log(xc) + (beta - 1) * std::log(1 - xc) + std::lgamma(alpha + beta) -
         std::lgamma(alpha) - std::lgamma(beta);
}

double BetaComponent::pdf(double x) const { return std::exp(log_pdf(x)); }

std::array<double, 2> beta_method_of_moments(const std::vector<double>& x, const std::vector<double>& weights) {
  REMATCH_CHECK(weights.empty() || weights.size() == x.size(), "beta_method_of_moments: ", weights.size(),
                " weights for ", x.size(), " samples");
  Moments s;
  for (size_t i = 0; i < x.size(); ++i) {
    REMATCH_CHECK(x[i] > 0 && x[i] < 1, "beta_method_of_moments: sample ", i, " is ", x[i], ", outside (0, 1)");
    s.add(weights.empty() ? 1.0 : weights[i], x[i]);
  }
  REMATCH_CHECK(s.w > 0, "beta_method_of_moments: the weights sum to ", s.w, " over ", x.size(),
                " samples; need a positive total");
  return shape_from_moments(s);
}

BetaMixtureResult fit_beta_mixture(const std::vector<double>& losses, uint64_t seed,
                                   const BetaMixtureOptions& options) {
  check_samples("fit_beta_mixture", losses);
  REMATCH_CHECK(options.first_max_iterations >= 0 && options.second_max_iterations >= 0,
                "fit_beta_mixture: iteration limits must be >= 0, got ", options.first_max_iterations, " and ",
                options.second_max_iterations);
  BetaMixtureResult result;
  result.x = normalise(losses);
  const size_t n = losses.size();
  if (all_equal(losses)) {
    result.fitted = false;
    result.clean_probability.assign(n, 1.0);
    result.clean.assign(n, 1);
    return result;
  }

  // from_samples: k-means++ centres, one Lloyd update, a method-of-moments fit per cluster (a cluster left
  // empty keeps TrueBetaDistribution.blank() = Beta(2, 2)), weights = cluster fractions.
  if (options.initial_centres) {
    result.initial_centres = *options.initial_centres;
    REMATCH_CHECK(std::isfinite(result.initial_centres[0]) && std::isfinite(result.initial_centres[1]),
                  "fit_beta_mixture: initial centres must be finite, got ", result.initial_centres[0], " and ",
                  result.initial_centres[1]);
  } else {
    Generator gen(seed);
    result.initial_centres = kmeans_plus_plus(result.x, gen);
  }
  std::array<double, 2> centres = result.initial_centres;
  const std::vector<int> labels = lloyd(result.x, centres, 1);
  Model model;
  std::array<double, 2> fraction{0, 0};
  for (size_t i = 0; i < n; ++i) {
    model.stats[labels[i]].add(1.0, result.x[i]);
    fraction[labels[i]] += 1;
  }
  for (int j = 0; j < 2; ++j) {
    const std::array<double, 2> ab = model.stats[j].w > 0 ? shape_from_moments(model.stats[j])
                                                          : std::array<double, 2>{2, 2};
    fraction[j] /= static_cast<double>(n);
    model.components[j] = {ab[0], ab[1], 0};
  }
  for (int j = 0; j < 2; ++j) model.components[j].weight = fraction[j] / (fraction[0] + fraction[1]);
  model.stats = {};
  result.initial_components = model.components;

  const FitOutcome first =
      fit_call(model, result.x, options.first_max_iterations, options.first_stop_threshold);
  const FitOutcome second =
      fit_call(model, result.x, options.second_max_iterations, options.second_stop_threshold);
  result.components = model.components;
  result.first_fit_iterations = first.m_steps;
  result.second_fit_iterations = second.m_steps;
  result.hit_iteration_cap = second.hit_cap;
  result.log_likelihood = second.log_likelihood;
  for (const BetaComponent& c : result.components)
    REMATCH_CHECK(std::isfinite(c.alpha) && std::isfinite(c.beta) && std::isfinite(c.weight) &&
                      std::isfinite(result.log_likelihood),
                  "fit_beta_mixture: EM ended with non-finite parameters (alpha ", c.alpha, ", beta ", c.beta,
                  ", weight ", c.weight, ", log-likelihood ", result.log_likelihood, ") on ", n, " samples");

  // predict_proba: posteriors normalised by pair_lse; the clean component is the argmax at x = 1e-3.
  auto posterior = [&](double x) {
    const std::array<double, 2> r = joint_log(result.components, x);
    const double total = pair_lse(r[0], r[1]);
    return std::array<double, 2>{std::exp(r[0] - total), std::exp(r[1] - total)};
  };
  const std::array<double, 2> at_floor = posterior(kBetaMixtureFloor);
  result.clean_component = at_floor[1] > at_floor[0] ? 1 : 0;
  result.clean_probability.resize(n);
  result.clean.resize(n);
  for (size_t i = 0; i < n; ++i) {
    result.clean_probability[i] = posterior(result.x[i])[result.clean_component];
    result.clean[i] = result.clean_probability[i] > 0.5 ? 1 : 0;
  }
  return result;
}

BetaMixtureRefit refit_beta_mixture(std::array<BetaComponent, 2> initial, const std::vector<double>& x,
                                    int max_iterations, double stop_threshold) {
  REMATCH_CHECK(!x.empty() && max_iterations >= 0, "refit_beta_mixture: ", x.size(), " samples and ",
                max_iterations, " iterations; need at least one sample and iterations >= 0");
  for (size_t i = 0; i < x.size(); ++i)
    REMATCH_CHECK(x[i] > 0 && x[i] < 1, "refit_beta_mixture: sample ", i, " is ", x[i], ", outside (0, 1)");
  for (const BetaComponent& c : initial)
    REMATCH_CHECK(c.alpha > 0 && c.beta > 0 && c.weight > 0 && std::isfinite(c.alpha) && std::isfinite(c.beta),
                  "refit_beta_mixture: initial component Beta(", c.alpha, ", ", c.beta, ") with weight ", c.weight,
                  "; need positive finite shapes and weight");
  Model model;
  model.components = initial;
  const FitOutcome fit = fit_call(model, x, max_iterations, stop_threshold);
  BetaMixtureRefit r;
  r.components = model.components;
  r.iterations = fit.m_steps;
  r.log_likelihood = fit.log_likelihood;
  for (const BetaComponent& c : r.components)
    REMATCH_CHECK(std::isfinite(c.alpha) && std::isfinite(c.beta) && std::isfinite(c.weight) &&
                      std::isfinite(r.log_likelihood),
                  "refit_beta_mixture: EM ended with non-finite parameters (alpha ", c.alpha, ", beta ", c.beta,
                  ", weight ", c.weight, ") on ", x.size(), " samples");
  r.posterior.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const std::array<double, 2> l = joint_log(r.components, x[i]);
    r.posterior[i] = std::exp(l[1] - pair_lse(l[0], l[1]));
  }
  return r;
}

}  // namespace rematch::mixture
