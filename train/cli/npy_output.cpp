#include "train/cli/npy_output.h"

#include <cstring>
#include <filesystem>

#include "tensor/file_io.h"
#include "train/cli/app.h"

namespace rematch::cli {

void require_replaceable_npy(const std::string& path, const std::string& flag) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;  // a new name (or a link to nothing: the writer names it)
  const std::string where = flag + " " + path;
  if (!std::filesystem::is_regular_file(path, ec))
    throw UsageError(where + " exists and is not a file: give the path of an .npy to write");
  char magic[6] = {};
  size_t got = 0;
  try {
    got = io::ReadFile(path, flag).read_at(magic, sizeof magic, 0);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (got != sizeof magic || std::memcmp(magic, "\x93NUMPY", sizeof magic) != 0)
    throw UsageError(where + " exists and is not an .npy file: writing would replace it; give another " + flag +
                     ", or move that file away");
}

}  // namespace rematch::cli
