#include "train/data/finite_features.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace rematch::data {
namespace {

// The flat index of the first value that is not finite, or -1.
template <typename T> int64_t first_non_finite(const T* p, int64_t n) {
  // Fixed blocks, so the answer (the smallest such index) does not depend on how many threads look.
  constexpr int64_t kBlock = int64_t{1} << 16;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  int64_t first = std::numeric_limits<int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : first) if (blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t end = std::min(n, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i)
      if (!std::isfinite(p[i])) {
        first = std::min(first, i);
        break;
      }
  }
  return first == std::numeric_limits<int64_t>::max() ? -1 : first;
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
  // The element's index in every dimension, the row being the first.
  std::ostringstream at;
  int64_t rest = bad;
  std::vector<int64_t> index(static_cast<size_t>(c.dim()));
  for (int64_t d = c.dim() - 1; d >= 0; --d) {
    index[static_cast<size_t>(d)] = rest % c.size(d);
    rest /= c.size(d);
  }
  for (size_t d = 0; d < index.size(); ++d) at << (d ? ", " : "[") << index[d];
  at << "]";
  const int64_t row = index.empty() ? 0 : index[0];
  REMATCH_FAIL(what, " '", path, "': ", row_word, " ", row, " holds ", value, " (element ", at.str(),
               "); only finite values can be used: ", advice);
}

}  // namespace rematch::data
