// Float .npy files as they are found: region features and similarity matrices saved by other
// code come as float64 (NumPy's default), float16 (to halve the disk), or in Fortran order (np.save(p, S.T)).
// They are accepted as the official loaders accept them, converted on load, and each conversion is said once,
// on one line of `notes`, naming the file and what was done.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "tensor/npy.h"
#include "tensor/tensor.h"

namespace rematch::data {

// Loads `path` (load_npy, mapping data of at least mmap_min_bytes) as a row-major host tensor: float16 is
// widened to float32, float64 narrowed to float32 unless keep_float64, Fortran order made row-major.
// `what` names the file in the note ("image features", "--sims"). Other dtypes come back as stored, for
// the caller's own check.
Tensor load_float_npy(const std::string& path, const std::string& what, std::ostream& notes, bool keep_float64,
                      int64_t mmap_min_bytes = kNpyMmapMinBytes);

}  // namespace rematch::data
