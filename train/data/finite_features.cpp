#include "train/data/finite_features.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace rematch::data {
namespace {

// The flat index of the first value for which bad(value) holds, or -1.
template <typename T, typename Bad> int64_t first_bad(const T* p, int64_t n, Bad bad) {
  // Fixed blocks, so the answer (the smallest such index) does not depend on how many threads look.
  constexpr int64_t kBlock = int64_t{1} << 16;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  int64_t first = std::numeric_limits<int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : first) if (blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t end = std::min(n, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i)
      if (bad(p[i])) {
        first = std::min(first, i);
        break;
      }
  }
  return first == std::numeric_limits<int64_t>::max() ? -1 : first;
}

template <typename T> int64_t first_non_finite(const T* p, int64_t n) {
  return first_bad(p, n, [](T v) { return !std::isfinite(v); });
}

// "[17, 3, 5]" for the flat index `flat` of `c`, and its row (the first index).
std::string element_index(const Tensor& c, int64_t flat, int64_t& row) {
  std::ostringstream at;
  int64_t rest = flat;
  std::vector<int64_t> index(static_cast<size_t>(c.dim()));
  for (int64_t d = c.dim() - 1; d >= 0; --d) {
    index[static_cast<size_t>(d)] = rest % c.size(d);
    rest /= c.size(d);
  }
  for (size_t d = 0; d < index.size(); ++d) at << (d ? ", " : "[") << index[d];
  at << "]";
  row = index.empty() ? 0 : index[0];
  return at.str();
}

}  // namespace

void check_finite_rows(const Tensor& t, const std::string& what, const std::string& path, const std::string& row_word,
                       const std::string& advice) {
  if (t.dtype() != DType::Float32 && t.dtype() != DType::Float64) return;
  REMATCH_CHECK(t.device().is_cpu(), "check_finite_rows: ", what, " '", path, "' must be on the host, got ", t.describe());
  const Tensor c = kernels::contiguous(t);
  const int64_t n = c.numel();
  const int64_t bad = c.dtype() == DType::Float32 ? first_non_finite(c.data<float>(), n)
                                                  : first_non_finite(c.data<double>(), n);
  if (bad < 0) return;
  const double value = c.dtype() == DType::Float32 ? static_cast<double>(c.data<float>()[bad]) : c.data<double>()[bad];
  int64_t row = 0;
  const std::string at = element_index(c, bad, row);
  REMATCH_FAIL(what, " '", path, "': ", row_word, " ", row, " holds ", value, " (element ", at,
               "); only finite values can be used: ", advice);
}

void check_float32_range(const Tensor& t, const std::string& what, const std::string& path,
                         const std::string& row_word, const std::string& advice) {
  if (t.dtype() != DType::Float64) return;
  REMATCH_CHECK(t.device().is_cpu(), "check_float32_range: ", what, " '", path, "' must be on the host, got ",
                t.describe());
  const Tensor c = kernels::contiguous(t);
  constexpr double kMax = std::numeric_limits<float>::max();
  const int64_t bad = first_bad(c.data<double>(), c.numel(), [](double v) { return std::fabs(v) > kMax; });
  if (bad < 0) return;
  int64_t row = 0;
  const std::string at = element_index(c, bad, row);
  REMATCH_FAIL(what, " '", path, "': ", row_word, " ", row, " holds ", c.data<double>()[bad], " (element ", at,
               "), beyond float32's range (magnitude at most ", kMax, "), the type the features are loaded as: ",
               advice);
}

}  // namespace rematch::data
