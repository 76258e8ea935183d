// A guard run on JSON text from outside (a file, a checkpoint's metadata) before it is parsed. nlohmann's parser
// reads any depth, but its serialiser and copies recurse once per level: a 200 kB file of nested brackets
// parses, then crashes the program (stack overflow) the moment an error message quotes a part of it. No file
// rematch reads nests deeper than a few levels, so text nested past kMaxJsonDepth is refused before parsing.
#pragma once

#include <string>
#include <string_view>

namespace rematch::io {

inline constexpr int kMaxJsonDepth = 64;

// Fails with "<what> '<path>': JSON nested more than 64 levels deep (byte N): ..." when arrays and objects in
// `text` nest deeper than kMaxJsonDepth (brackets inside strings are not counted). Malformed text is left to
// the parser's own message.
void require_shallow_json(std::string_view text, const std::string& what, const std::string& path);
// The same, the message starting "<where>: " (for text whose file the caller does not know).
void require_shallow_json(std::string_view text, const std::string& where);

}  // namespace rematch::io
