// Two-means clustering of 1-D samples: the initialisation shared by the two-component mixture models of the
// per-epoch clean/noisy split (beta_mixture.h, gaussian_mixture.h). k-means++ seeding (Arthur & Vassilvitskii
// 2007) draws the first centre uniformly and the second with probability proportional to the squared distance
// to the first, from a rematch::Generator, so a seed reproduces the split on every machine.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tensor/random.h"

namespace rematch::mixture {

// Throws unless `values` holds at least two samples and all are finite; `op` names the caller and the message
// gives the first offending index and value.
void check_samples(const char* op, const std::vector<double>& values);

// True when every value equals the first (no split is possible; the mixtures document what they do then).
bool all_equal(const std::vector<double>& values);

// k-means++ seeding for k = 2 (pomegranate kmeans.pyx `initialize_centroids(..., 'kmeans++')`): centre 0 is
// values[⌊u₀·N⌋], centre 1 is drawn with P(i) = (x_i − c₀)² / Σ_j (x_j − c₀)², with two uniforms u₀, u₁ taken
// from `gen` in one call. Needs two distinct values (check with all_equal first).
std::array<double, 2> kmeans_plus_plus(const std::vector<double>& values, Generator& gen);

// Nearest centre per sample, 0 or 1; a sample exactly between the centres goes to centre 0 (pomegranate and
// scikit-learn both keep the first of equal distances).
std::vector<int> assign_to_centres(const std::vector<double>& values, const std::array<double, 2>& centres);

// Lloyd updates from `centres`: assign, move each centre to the mean of its samples, and repeat
// `max_updates` times or until no assignment changes; returns the final assignment (made with the final
// centres, which are written back). A centre left without samples keeps its place.
std::vector<int> lloyd(const std::vector<double>& values, std::array<double, 2>& centres, int max_updates);

}  // namespace rematch::mixture
