// safetensors files (https://github.com/huggingface/safetensors): an 8-byte little-endian header length N,
// N bytes of JSON header {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
// "__metadata__": {"key": "value", ...}}, then the raw little-endian tensor bytes, with offsets relative to
// the end of the header. What we write opens with Python's `safetensors` package, and we read what it writes.
// Supported dtypes: F32 F64 I32 I64 BOOL U8.
// Checksums: a file saved with `checksum` true carries the metadata entry "rematch.checksum" = "xxh64:<16 hex>",
// the XXH64 (tensor/checksum.h) of what the file holds: every tensor's name, dtype, shape and bytes (in name
// order) and every other metadata entry (in key order). Every load of such a file recomputes it; a mismatch
// (a flipped bit, a file changed after it was written) is a DamagedFile error naming the file. Files without
// the entry (written by earlier versions, or by other tools) load unchecked, and say so in checksum_verified.
#pragma once

#include <map>
#include <string>

#include "nn/module.h"
#include "tensor/error.h"

namespace rematch::nn {

using SafetensorsMetadata = std::map<std::string, std::string>;

constexpr const char* kChecksumKey = "rematch.checksum";

struct SafetensorsFile {
  NamedTensors tensors;  // in the header's order (which is the order they were saved in)
  SafetensorsMetadata metadata;  // without kChecksumKey
  bool checksum_verified = false;  // the file carried a checksum and its contents match it
};

// A file whose contents do not match the checksum it carries.
class DamagedFile : public Error {
 public:
  using Error::Error;
};

// "xxh64:<16 hex>" over `tensors` and `metadata` (kChecksumKey left out) as described above.
std::string safetensors_checksum(const NamedTensors& tensors, const SafetensorsMetadata& metadata);

// Writes `tensors` (copied to the host, contiguous) and `metadata`. The header is space-padded so the data
// starts 8-byte aligned, and tensors are laid out by decreasing element size, so each is aligned for its
// dtype. The file is written under a temporary name in the same folder, flushed, and renamed over `path`,
// so a crash never leaves a half-written file. Names must be unique, non-empty and not "__metadata__".
void save_safetensors(const std::string& path, const NamedTensors& tensors, const SafetensorsMetadata& metadata = {},
                      bool checksum = false);

// Reads every tensor into host memory. The whole header is validated first: its length against the file,
// the JSON, every entry's dtype, shape and data_offsets (inside the data, no two overlapping, as many bytes
// as shape × dtype size), and bool bytes; any problem is an Error naming the file and what is wrong.
SafetensorsFile load_safetensors(const std::string& path);

// The metadata alone (the header is validated the same way; no tensor data is read, so the checksum is not
// checked; kChecksumKey is kept in the map).
SafetensorsMetadata read_safetensors_metadata(const std::string& path);

}  // namespace rematch::nn
