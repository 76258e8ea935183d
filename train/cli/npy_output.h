// The --out of a command that writes an .npy (`rematch score`, `rematch ot`): checked before any work, so that a
// slip in the path costs nothing and replaces nothing but an earlier .npy. Before, `score --out
// run/checkpoint_best.safetensors` replaced a run's best checkpoint with a score matrix, exit 0.
#pragma once

#include <string>

namespace rematch::cli {

// A UsageError when `path` exists and is not an .npy file (its first bytes are not "\x93NUMPY"): "--out <path>
// exists and is not an .npy file (it starts with ...): give another --out, or move that file away". A new name,
// or an .npy to replace, passes; so does a symbolic link to one (the file it names is replaced).
void require_replaceable_npy(const std::string& path, const std::string& flag);

}  // namespace rematch::cli
