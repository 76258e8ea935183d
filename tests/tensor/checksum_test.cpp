// XXH64 against the reference implementation's values (printed by Debian's `xxhsum -H64`, xxHash 0.8), and
// the streaming property: any split of the input gives the digest of the whole.
#include "tensor/checksum.h"

#include <gtest/gtest.h>

#include <string>

namespace rematch {
namespace {

TEST(Checksum, MatchesTheReferenceXxh64) {
  EXPECT_EQ(xxh64_hex(""), "ef46db3751d8e999");
  EXPECT_EQ(xxh64_hex("a"), "d24ec4f1a98c6e5b");
  EXPECT_EQ(xxh64_hex("abc"), "44bc2cf5ad770999");
  EXPECT_EQ(xxh64_hex(std::string(31, 'q')), "c5de6c8bb3485c3a");  // one byte short of a stripe
  EXPECT_EQ(xxh64_hex(std::string(1000, 'x')), "4cb9a3b69cb700e1");
  EXPECT_EQ(xxh64_hex("The quick brown fox jumps over the lazy dog"), "0b242d361fda71bc");
}

TEST(Checksum, AnySplitOfTheInputGivesTheSameDigest) {
  std::string data(777, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131 + 7) % 251);
  const std::string whole = xxh64_hex(data);
  for (size_t piece : {1, 3, 8, 31, 32, 33, 100, 776}) {
    Xxh64 h;
    for (size_t at = 0; at < data.size(); at += piece) h.update(data.data() + at, std::min(piece, data.size() - at));
    EXPECT_EQ(h.hex(), whole) << "pieces of " << piece;
  }
}

TEST(Checksum, OneFlippedBitChangesTheDigest) {
  std::string data(4096, 'z');
  const std::string before = xxh64_hex(data);
  for (size_t at : {0, 1000, 4095}) {
    std::string flipped = data;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    EXPECT_NE(xxh64_hex(flipped), before) << "bit flipped at byte " << at;
  }
}

}  // namespace
}  // namespace rematch
