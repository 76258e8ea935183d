// load_safetensors and read_safetensors_metadata (nn/safetensors.cpp) on any bytes: a file that loads has the
// same metadata both ways, and saves and loads back unchanged.
#include <cstring>

#include "fuzz/fuzz_util.h"
#include "nn/nn.h"

using namespace rematch;

namespace {

bool same(const nn::SafetensorsFile& a, const nn::SafetensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor& x = a.tensors[i].second;
    const Tensor& y = b.tensors[i].second;
    if (a.tensors[i].first != b.tensors[i].first || x.dtype() != y.dtype() || x.sizes() != y.sizes() ||
        (x.numel() > 0 &&
         std::memcmp(x.raw_data(), y.raw_data(), static_cast<size_t>(x.numel()) * dtype_size(x.dtype())) != 0))
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("input.safetensors", fuzz::bytes(data, size));
  nn::SafetensorsFile file;
  nn::SafetensorsMetadata metadata;
  const bool ok = fuzz::reads_or_names(path, [&] { file = nn::load_safetensors(path); });
  const bool metadata_ok = fuzz::reads_or_names(path, [&] { metadata = nn::read_safetensors_metadata(path); });
  // The metadata reader validates the same header but reads no tensor data (so it cannot see bad bool bytes).
  if (ok && !metadata_ok) fuzz::fail("read_safetensors_metadata refuses a file load_safetensors reads");
  if (!ok) return 0;
  if (metadata != file.metadata) fuzz::fail("read_safetensors_metadata differs from load_safetensors' metadata");
  const std::string copy = fuzz::temp_dir() + "/copy.safetensors";
  nn::save_safetensors(copy, file.tensors, file.metadata);
  if (!same(nn::load_safetensors(copy), file)) fuzz::fail("save + load does not give the file's tensors back");
  return 0;
}
