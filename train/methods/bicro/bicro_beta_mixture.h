// BiCro's per-epoch split of the training pairs (`BiCro/co_train.py: BetaMixture1D`, `eval_train`, fit_type "bmm";
// docs/methods/bicro.md §3): a two-component Beta mixture over the min–max normalised per-pair losses, fitted as
// the official class does. Not L2RM's mixture (train/mixture/beta_mixture.h, pomegranate's): BiCro's has no k-means
// start and no stopping rule, so it draws nothing.
//
//  fit(x):  x clamped to [1e-4, 1 − 1e-4] (a copy); start α = (1, 2), β = (2, 1), π = (½, ½); 10 iterations of
//           E: r_ky = π_y·Beta(x_k; α_y, β_y), every r ≤ 1e-12 raised to 1e-12, then r_ky /= Σ_y r_ky;
//           M: per component the weighted method of moments (`fit_beta_weighted`): m = Σ r x / Σ r,
//              s² = Σ r (x − m)² / Σ r, α = m(m(1 − m)/s² − 1), β = α(1 − m)/m; π_y = Σ_k r_ky / Σ r.
//  w_k = posterior(x_k, 0) = π_0 Beta(x_k; α_0, β_0) / (π_0 Beta(x_k; α_0, β_0) + π_1 Beta(x_k; α_1, β_1) + 1e-12)
//           at the UNclamped x (the code's `bmm.posterior(input_loss, 0)`): component 0 (started low, α < β) is
//           the clean one.
// The density is scipy's `stats.beta.pdf`: 0 outside [0, 1]; at x = 0 it is ∞ for α < 1, β for α = 1 and 0 for
// α > 1 (the mirror at x = 1), so the pair of smallest (x = 0) or largest (x = 1) loss can get a NaN posterior
// (∞/∞) or 0, as in the code; NaN for α ≤ 0, β ≤ 0 or NaN parameters (a moment fit with s² too large). A NaN
// posterior is not clean (NaN > t is false).
#pragma once

#include <array>
#include <vector>

namespace rematch::train {

// scipy.stats.beta.pdf(x, a, b) (see above).
double bicro_beta_pdf(double x, double a, double b);

struct BicroBetaMixture {
  std::array<double, 2> alpha{1, 2};
  std::array<double, 2> beta{2, 1};
  std::array<double, 2> weight{0.5, 0.5};
  // The posterior of component `y` at x (`BetaMixture1D.posterior`).
  double posterior(double x, int y) const;
};

// `BetaMixture1D(max_iters).fit(x)`.
BicroBetaMixture fit_bicro_beta_mixture(const std::vector<double>& x, int max_iters = 10);

}  // namespace rematch::train
