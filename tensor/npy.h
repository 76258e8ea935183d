// NumPy .npy files: the format the public retrieval benchmarks ship their precomputed features in.
// Reads format versions 1.0, 2.0 and 3.0 with little-endian data of dtype <f2 <f4 <f8 <i4 <i8 |b1 |u1, in C
// or Fortran order, as files are found: float16 is widened to float32 (there is no float16 DType),
// Fortran-order data comes back as a column-major strided view. Writes version 1.0 (2.0 when the header needs
// it), C order. Anything else — big-endian data, other dtypes, a truncated or garbled file — is an Error that
// names the file and what is wrong.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/tensor_core.h"

namespace rematch {

// Data of at least this many bytes is memory-mapped rather than read.
constexpr int64_t kNpyMmapMinBytes = int64_t{64} << 20;

// What a file's header says, without reading its data (callers use it to say what a load converted).
struct NpyHeaderInfo {
  std::string descr;  // as stored: "<f4", "<f2", ...
  bool fortran_order = false;
  Shape shape;
};
NpyHeaderInfo read_npy_header(const std::string& path);

// A host tensor with the file's dtype (float32 for <f2) and shape. When the data holds at least
// `mmap_min_bytes` bytes (pass 0 to always map, a negative value to never) and starts at an offset aligned for its dtype, the tensor's
// storage is a private copy-on-write mapping of the file: pages load on first touch, writes to the tensor
// never reach the file, and the mapping is released with the last view. Otherwise the data is read.
Tensor load_npy(const std::string& path, int64_t mmap_min_bytes = kNpyMmapMinBytes);

// Writes `t` (copied to the host and made contiguous when needed) to a temporary file in the same folder
// and renames it over `path`, so a failure never leaves a half-written file behind.
void save_npy(const std::string& path, const Tensor& t);

}  // namespace rematch
