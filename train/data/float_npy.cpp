#include "train/data/float_npy.h"

namespace rematch::data {

Tensor load_float_npy(const std::string& path, const std::string& what, std::ostream& notes, bool keep_float64,
                      int64_t mmap_min_bytes) {
  const NpyHeaderInfo header = read_npy_header(path);
  Tensor t = load_npy(path, mmap_min_bytes);
  std::string done;
  if (header.descr == "<f2") done = "float16 widened to float32";
  if (header.descr == "<f8" && !keep_float64) {
    t = kernels::cast(t, DType::Float32);
    done = "float64 converted to float32 (the models compute in float32)";
  }
  if (header.fortran_order && t.dim() > 1) {
    t = kernels::contiguous(t);
    done += std::string(done.empty() ? "" : ", ") + "Fortran (column-major) order made row-major";
  }
  if (!done.empty()) notes << "rematch: note: " << what << " '" << path << "': " << done << " on load\n";
  return t;
}

}  // namespace rematch::data
