// io::require_shallow_json (tensor/json_depth.h): JSON text nested past kMaxJsonDepth is refused by name before
// nlohmann parses it (its serialiser recurses per level: quoting a part of such a value in an error message
// overflowed the stack); brackets inside strings do not count.
#include "tensor/json_depth.h"

#include <gtest/gtest.h>

#include <string>

#include "tensor/error.h"

namespace rematch::io {
namespace {

std::string nested(int depth, const std::string& inner = "") {
  return std::string(static_cast<size_t>(depth), '[') + inner + std::string(static_cast<size_t>(depth), ']');
}

TEST(JsonDepth, TextAtTheLimitPasses) {
  EXPECT_NO_THROW(require_shallow_json(nested(kMaxJsonDepth), "config", "run/config.json"));
  EXPECT_NO_THROW(require_shallow_json("{\"a\": [1, {\"b\": [2]}], \"c\": \"x\"}", "config", "c.json"));
  // Siblings do not add up: depth is nesting, not bracket count.
  std::string wide;
  for (int i = 0; i < 1000; ++i) wide += "[[1]],";
  EXPECT_NO_THROW(require_shallow_json("[" + wide + "0]", "config", "c.json"));
}

TEST(JsonDepth, OneLevelPastTheLimitIsRefusedNamingTheFileAndTheByte) {
  try {
    require_shallow_json(nested(kMaxJsonDepth + 1), "label noise file", "noise.json");
    FAIL() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "label noise file 'noise.json': JSON nested more than 64 levels deep (byte 64); no file rematch reads "
              "nests that deep: is it the right file?");
  }
  EXPECT_THROW(require_shallow_json(nested(100000), "train config"), Error);
  EXPECT_THROW(require_shallow_json(std::string(200, '{'), "train config"), Error);
}

TEST(JsonDepth, BracketsInsideStringsAreNotCounted) {
  const std::string text = "{\"k\": \"" + std::string(500, '[') + "\\\"" + std::string(500, '{') + "\"}";
  EXPECT_NO_THROW(require_shallow_json(text, "config", "c.json"));
  // An escaped backslash ends before the closing quote: the string ends there, and what follows counts.
  EXPECT_THROW(require_shallow_json("[\"\\\\\"," + nested(kMaxJsonDepth) + "]", "config", "c.json"), Error);
}

}  // namespace
}  // namespace rematch::io
