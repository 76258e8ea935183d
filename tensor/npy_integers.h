// .npy files whose values become indices, labels or flags (noise files, a run's splits and noisy labels): read
// as integers, with every value checked before anything indexes with it. A float file is refused even when its
// values look whole: NaN or 1e30 has no int64 value (converting one is undefined behaviour), and the files
// rematch writes hold integers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor_core.h"

namespace rematch {

struct IntegerNpy {
  std::string path;
  Shape shape;
  std::vector<int64_t> values;  // C order
};

// Loads `path` (never memory-mapped) holding int32, int64, uint8 or bool. Any other dtype is an Error
// "<what> '<path>' holds float32[...]: expected integers (int64); entry 7 is nan" naming, for a float file,
// its first entry that is not a whole finite number.
IntegerNpy load_integer_npy(const std::string& path, const std::string& what);

// Every value in [lo, hi), else an Error "<what> '<path>': entry <i> is <v>, outside [lo, hi) (<meaning>)".
// For a two-dimensional file the entry is given as [row, column].
void check_integer_range(const IntegerNpy& file, const std::string& what, int64_t lo, int64_t hi,
                         const std::string& meaning);

}  // namespace rematch
