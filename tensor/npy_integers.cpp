#include "tensor/npy_integers.h"

#include <cmath>
#include <sstream>

#include "tensor/error.h"
#include "tensor/kernels.h"
#include "tensor/npy.h"

namespace rematch {
namespace {

// "7" for a flat file, "[1, 3]" for a [rows, cols] one.
std::string entry_name(const Shape& shape, size_t i) {
  if (shape.size() != 2 || shape[1] == 0) return std::to_string(i);
  const int64_t cols = shape[1];
  return "[" + std::to_string(static_cast<int64_t>(i) / cols) + ", " + std::to_string(static_cast<int64_t>(i) % cols) +
         "]";
}

}  // namespace

IntegerNpy load_integer_npy(const std::string& path, const std::string& what) {
  const Tensor t = load_npy(path, -1);
  IntegerNpy out;
  out.path = path;
  out.shape = t.sizes();
  const DType d = t.dtype();
  if (d == DType::Float32 || d == DType::Float64) {
    const std::vector<double> v = kernels::cast(t, DType::Float64).to_vector<double>();
    std::ostringstream first;
    for (size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]) || std::floor(v[i]) != v[i]) {
        first << "; entry " << entry_name(out.shape, i) << " is " << v[i];
        break;
      }
    REMATCH_FAIL(what, " '", path, "' holds ", d == DType::Float32 ? "float32" : "float64", shape_str(out.shape),
                 ": expected integers (int64)", first.str(), "; re-save it with an integer dtype (np.int64)");
  }
  out.values = t.to_vector<int64_t>();
  return out;
}

void check_integer_range(const IntegerNpy& file, const std::string& what, int64_t lo, int64_t hi,
                         const std::string& meaning) {
  for (size_t i = 0; i < file.values.size(); ++i) {
    const int64_t v = file.values[i];
    REMATCH_CHECK(v >= lo && v < hi, what, " '", file.path, "': entry ", entry_name(file.shape, i), " is ", v,
                  ", outside [", lo, ", ", hi, ") (", meaning, ")");
  }
}

}  // namespace rematch
