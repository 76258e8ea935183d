#include "train/methods/bicro/bicro_beta_mixture.h"

#include <cmath>
#include <limits>

#include "tensor/error.h"

namespace rematch::train {
namespace {

constexpr double kEpsNan = 1e-12;  // `BetaMixture1D.eps_nan`

// `fit_beta_weighted(x, w)`: the weighted method of moments.
std::array<double, 2> fit_beta_weighted(const std::vector<double>& x, const std::vector<double>& w) {
  double sw = 0, swx = 0;
  for (size_t k = 0; k < x.size(); ++k) sw += w[k], swx += w[k] * x[k];
  const double m = swx / sw;
  double s2 = 0;
  for (size_t k = 0; k < x.size(); ++k) s2 += w[k] * (x[k] - m) * (x[k] - m);
  s2 /= sw;
  const double a = m * ((m * (1 - m)) / s2 - 1);
  return {a, a * (1 - m) / m};
}

}  // namespace

double bicro_beta_pdf(double x, double a, double b) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (std::isnan(x) || std::isnan(a) || std::isnan(b) || a <= 0 || b <= 0) return nan;
  if (x < 0 || x > 1) return 0;
  const double inf = std::numeric_limits<double>::infinity();
  const double log_beta = std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  if (x == 0) return a < 1 ? inf : a == 1 ? std::exp(-log_beta) : 0.0;
  if (x == 1) return b < 1 ? inf : b == 1 ? std::exp(-log_beta) : 0.0;
  return std::exp((a - 1) * std::log(x) + (b - 1) * std::log1p(-x) - log_beta);
}

double BicroBetaMixture::posterior(double x, int y) const {
  const double w0 = weight[0] * bicro_beta_pdf(x, alpha[0], beta[0]);
  const double w1 = weight[1] * bicro_beta_pdf(x, alpha[1], beta[1]);
  return (y == 0 ? w0 : w1) / (w0 + w1 + kEpsNan);
}

BicroBetaMixture fit_bicro_beta_mixture(const std::vector<double>& input, int max_iters) {
  REMATCH_CHECK(input.size() >= 2, "bicro: the Beta mixture needs at least 2 per-pair losses, got ", input.size());
  std::vector<double> x = input;
  constexpr double eps = 1e-4;
  for (double& v : x) {
    if (v >= 1 - eps) v = 1 - eps;
    if (v <= eps) v = eps;
  }
  BicroBetaMixture m;
  std::vector<double> r0(x.size()), r1(x.size());
  for (int it = 0; it < max_iters; ++it) {
    for (size_t k = 0; k < x.size(); ++k) {
      double a = m.weight[0] * bicro_beta_pdf(x[k], m.alpha[0], m.beta[0]);
      double b = m.weight[1] * bicro_beta_pdf(x[k], m.alpha[1], m.beta[1]);
      if (a <= kEpsNan) a = kEpsNan;  // `r[r <= eps_nan] = eps_nan` (a NaN stays NaN)
      if (b <= kEpsNan) b = kEpsNan;
      const double s = a + b;
      r0[k] = a / s;
      r1[k] = b / s;
    }
    const auto [a0, b0] = fit_beta_weighted(x, r0);
    const auto [a1, b1] = fit_beta_weighted(x, r1);
    m.alpha = {a0, a1};
    m.beta = {b0, b1};
    double s0 = 0, s1 = 0;
    for (size_t k = 0; k < x.size(); ++k) s0 += r0[k], s1 += r1[k];
    m.weight = {s0 / (s0 + s1), s1 / (s0 + s1)};
  }
  return m;
}

}  // namespace rematch::train
