#include "tensor/json_depth.h"

#include <cstddef>

#include "tensor/error.h"

namespace rematch::io {

void require_shallow_json(std::string_view text, const std::string& what, const std::string& path) {
  require_shallow_json(text, what + " '" + path + "'");
}

void require_shallow_json(std::string_view text, const std::string& where) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote included
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        REMATCH_FAIL(where, ": JSON nested more than ", kMaxJsonDepth, " levels deep (byte ", i,
                     "); no file rematch reads nests that deep: is it the right file?");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

}  // namespace rematch::io
