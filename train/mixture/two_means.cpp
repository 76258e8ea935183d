#include "train/mixture/two_means.h"

#include <cmath>

namespace rematch::mixture {

void check_samples(const char* op, const std::vector<double>& values) {
  REMATCH_CHECK(values.size() >= 2, op, ": needs at least 2 samples to fit two components, got ", values.size());
  for (size_t i = 0; i < values.size(); ++i)
    REMATCH_CHECK(std::isfinite(values[i]), op, ": sample ", i, " of ", values.size(), " is ", values[i],
                  " (every loss must be finite)");
}

bool all_equal(const std::vector<double>& values) {
  for (double v : values)
    if (v != values.front()) return false;
  return true;
}

std::array<double, 2> kmeans_plus_plus(const std::vector<double>& values, Generator& gen) {
  const size_t n = values.size();
  REMATCH_CHECK(n >= 2 && !all_equal(values), "kmeans_plus_plus: needs two distinct values among ", n);
  const std::vector<double> u = rand({2}, DType::Float64, Device::cpu(), &gen).to_vector<double>();
  const double first = values[std::min(n - 1, static_cast<size_t>(u[0] * static_cast<double>(n)))];
  std::vector<double> cumulative(n);
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    total += (values[i] - first) * (values[i] - first);
    cumulative[i] = total;
  }
  // Inverse CDF: the first index whose cumulative squared distance exceeds u₁·total (never one at distance 0).
  const double target = u[1] * total;
  size_t pick = 0;
  while (pick + 1 < n && !(cumulative[pick] > target)) ++pick;
  return {first, values[pick]};
}

std::vector<int> assign_to_centres(const std::vector<double>& values, const std::array<double, 2>& centres) {
  std::vector<int> labels(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    labels[i] = std::fabs(values[i] - centres[1]) < std::fabs(values[i] - centres[0]) ? 1 : 0;
  return labels;
}

std::vector<int> lloyd(const std::vector<double>& values, std::array<double, 2>& centres, int max_updates) {
  std::vector<int> labels = assign_to_centres(values, centres);
  for (int update = 0; update < max_updates; ++update) {
    double sum[2] = {0, 0}, count[2] = {0, 0};
    for (size_t i = 0; i < values.size(); ++i) {
      sum[labels[i]] += values[i];
      count[labels[i]] += 1;
    }
    for (int k = 0; k < 2; ++k)
      if (count[k] > 0) centres[k] = sum[k] / count[k];
    std::vector<int> next = assign_to_centres(values, centres);
    const bool stable = next == labels;
    labels = std::move(next);
    if (stable) break;
  }
  return labels;
}

}  // namespace rematch::mixture
