// L2RM's per-epoch clean/mismatched split: a two-component Beta mixture over the normalised per-sample losses,
// fitted exactly as the official code does with pomegranate's GeneralMixtureModel of TrueBetaDistribution
// (docs/methods/l2rm.md §1.3; main_L2RM.py `BMM_pred`, pomegranate gmm.pyx, kmeans.pyx, TrueBetaDistribution.pyx):
//
//  1. x_i = (ℓ_i − min ℓ) / (max ℓ − min ℓ), then x ≥ 1 → 1 − 1e-3 and x ≤ 0 → 1e-3 (the code's literal
//     `10e-4` is 1e-3). Computed in float64 (the reference normalises its float32 losses in float32).
//  2. Initialisation (`from_samples`): k-means++ seeded 2-means, n_init 1, one Lloyd update (assign, move the
//     centres, assign); each component then gets the method-of-moments fit of its cluster and the mixture
//     weights are the cluster fractions.
//  3. EM, two `fit` calls: the first with at most 10 iterations and stop threshold 1e-2, the second with
//     pomegranate's defaults, stop threshold 0.1 and effectively unlimited iterations (capped here, see
//     BetaMixtureOptions). In each call iteration 0 is an E-step only; each further iteration is an M-step
//     followed by an E-step, and the call stops once the increase of the total log-likelihood Σ_i log p(x_i)
//     is ≤ the threshold (a decrease also stops it) or the iteration limit is reached. The statistics of the
//     last E-step are dropped, so the final parameters are those that E-step used.
//     E-step: log r_ij = log π_j + (a_j−1) log x_i + (b_j−1) log(1−x_i) + lgamma(a_j+b_j) − lgamma(a_j) −
//     lgamma(b_j), normalised over j by log-sum-exp. M-step: π_j = Σ_i r_ij / N and the weighted method of
//     moments below; a component whose responsibilities sum below 1e-8 keeps its parameters (pomegranate).
//  4. The clean component is the one with the larger posterior at x = 1e-3 (ties: component 0); sample i is
//     clean iff its posterior under the clean component is > 0.5.
//
// Guards (not in pomegranate, whose author reported NaN parameters from it, pomegranate PR #901): the moment
// variance is clamped to ≥ 1e-12 and a, b to ≥ 1e-3, so lgamma never sees 0 (pomegranate clamps a, b at 0).
// They change nothing on data with spread. lgamma is the C library's (pomegranate has its own, accurate to
// ~12 digits). Degenerate input: fewer than 2 losses or a NaN/infinite loss is an Error; when all losses are
// equal no split exists and every sample is clean with probability 1 (`fitted` is false, components zero).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace rematch::mixture {

// The normalisation bounds of step 1.
constexpr double kBetaMixtureFloor = 1e-3;

struct BetaComponent {
  double alpha = 0;
  double beta = 0;
  double weight = 0;  // mixture weight π
  // Beta(alpha, beta) log-density; x is clamped to [1e-6, 1 − 1e-6] first, as pomegranate's `x_eps` does, so
  // plots can ask for 0 and 1.
  double log_pdf(double x) const;
  double pdf(double x) const;
};

// Weighted method of moments (TrueBetaDistribution.from_summaries): with W = Σ w_i, m = Σ w_i x_i / W and the
// population variance v = Σ w_i x_i² / W − m², a = m·(m(1−m)/v − 1) and b = a(1−m)/m, with the guards above.
// `weights` empty means all 1. Returns {a, b}; the sum of weights must be positive.
std::array<double, 2> beta_method_of_moments(const std::vector<double>& x, const std::vector<double>& weights = {});

struct BetaMixtureOptions {
  int first_max_iterations = 10;
  double first_stop_threshold = 1e-2;
  // pomegranate's default is 1e8 iterations; far fewer always suffice for a 0.1 threshold, and a fit that
  // reaches the cap says so in BetaMixtureResult::hit_iteration_cap instead of running on.
  int second_max_iterations = 10000;
  double second_stop_threshold = 0.1;
  // Initial k-means centres in normalised units, replacing the seeded k-means++ draw (for reproducing a
  // reference run whose draw came from another RNG).
  std::optional<std::array<double, 2>> initial_centres;
};

struct BetaMixtureResult {
  std::vector<double> x;                  // the normalised losses
  std::vector<double> clean_probability;  // posterior of the clean component per sample
  std::vector<uint8_t> clean;             // 1 iff clean_probability > 0.5
  std::array<BetaComponent, 2> components;
  int clean_component = 0;
  std::array<double, 2> initial_centres{};  // k-means++ centres before the Lloyd update
  std::array<BetaComponent, 2> initial_components;
  int first_fit_iterations = 0;   // M-steps of the first fit call
  int second_fit_iterations = 0;  // M-steps of the second
  bool hit_iteration_cap = false;  // the second fit stopped at second_max_iterations, not by the threshold
  double log_likelihood = 0;      // Σ_i log p(x_i) at the final parameters
  bool fitted = true;             // false when all losses were equal (see above)
};

// Fits the mixture to per-sample losses (any scale); the k-means++ draw comes from Generator(seed).
BetaMixtureResult fit_beta_mixture(const std::vector<double>& losses, uint64_t seed,
                                   const BetaMixtureOptions& options = {});

// MSCN's split (`MSCN/main_MSCN.py: split_data`, docs/methods/mscn.md §3): a mixture whose two components are
// given (each TrueBetaDistribution.from_samples of a part of the meta set: the method of moments above), with
// equal weights (GeneralMixtureModel's default), refined by one `fit` call on `x` (values in (0, 1), used as they
// are) of at most `max_iterations` M-steps that stops when the log-likelihood gains ≤ `stop_threshold` (the
// iteration rule of step 3 above). `posterior[i]` is component 1's posterior of x_i (`predict_proba(x)[:, 1]`).
struct BetaMixtureRefit {
  std::array<BetaComponent, 2> components;
  std::vector<double> posterior;
  int iterations = 0;  // M-steps run
  double log_likelihood = 0;
};
BetaMixtureRefit refit_beta_mixture(std::array<BetaComponent, 2> initial, const std::vector<double>& x,
                                    int max_iterations, double stop_threshold);

}  // namespace rematch::mixture
