// Two-component 1-D Gaussian mixture for a clean/noisy split of per-sample losses (DivideMix / NCR style):
// scikit-learn's GaussianMixture(n_components=2, max_iter=10, tol=1e-2, reg_covar=5e-4) with its default
// covariance_type 'full' (1×1 here), reproduced step for step (sklearn/mixture/_base.py `fit_predict`,
// _gaussian_mixture.py):
//
//  * Initialisation from hard responsibilities (sklearn: the labels of KMeans(n_clusters=2, n_init=1)):
//    n_k = Σ_i r_ik + 10·ε_float64, μ_k = Σ_i r_ik x_i / n_k, σ²_k = Σ_i r_ik (x_i − μ_k)² / n_k + reg_covar,
//    π_k = n_k / N.
//  * EM, n = 1 .. max_iter: E-step with the current parameters (log π_k + log N(x_i; μ_k, σ²_k), normalised by
//    log-sum-exp; lower bound = mean over i of the log-sum-exp), then the M-step above from the soft
//    responsibilities with π_k = n_k / Σ_k n_k; stop after the iteration where |Δ lower bound| < tol.
//  * The posteriors returned are predict_proba under the final parameters; the clean component is the one
//    with the smaller mean (argmin: ties go to component 0).
//
// The values are used as given (callers normalise losses to [0, 1] first, as DivideMix and NCR do).
// scikit-learn's KMeans draws its k-means++ candidates from NumPy's RNG; fit_gaussian_mixture(values, seed)
// instead runs our own seeded 2-means (two_means.h: k-means++, then Lloyd updates until no label changes, at
// most 300 as sklearn's max_iter), so its split matches scikit-learn's whenever the two k-means runs reach the
// same clusters; the labels overload takes a reference run's labels to reproduce it exactly.
// Degenerate input: fewer than 2 values or a NaN/infinite value is an Error; when all values are equal no
// split exists and every sample is clean with probability 1 (`fitted` is false, parameters zero).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace rematch::mixture {

struct GaussianMixtureOptions {
  int max_iterations = 10;
  double tolerance = 1e-2;
  double reg_covar = 5e-4;
  int max_kmeans_updates = 300;  // Lloyd updates of the seeded initialisation
};

struct GaussianMixtureResult {
  std::array<double, 2> means{};
  std::array<double, 2> variances{};  // reg_covar included, as sklearn's covariances_
  std::array<double, 2> weights{};
  int clean_component = 0;                // argmin of the means
  std::vector<double> clean_probability;  // posterior of the clean component per sample
  std::vector<int> initial_labels;        // the hard initial assignment, 0 or 1 per sample
  int iterations = 0;                     // EM iterations run (sklearn n_iter_)
  bool converged = false;                 // |Δ lower bound| < tolerance was reached
  double lower_bound = 0;                 // mean log-likelihood at the last E-step (sklearn lower_bound_)
  bool fitted = true;                     // false when all values were equal
  // Log-density of component k at x: log N(x; μ_k, σ²_k).
  double log_pdf(int k, double x) const;
};

// Initialised by our seeded 2-means on `values` (Generator(seed)).
GaussianMixtureResult fit_gaussian_mixture(const std::vector<double>& values, uint64_t seed,
                                           const GaussianMixtureOptions& options = {});
// Initialised from given hard labels (0 or 1, one per value).
GaussianMixtureResult fit_gaussian_mixture(const std::vector<double>& values, const std::vector<int>& initial_labels,
                                           const GaussianMixtureOptions& options = {});

}  // namespace rematch::mixture
