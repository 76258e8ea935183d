// XXH64, the 64-bit xxHash of Yann Collet (https://github.com/Cyan4973/xxHash, doc/xxhash_spec.md), written
// out here so the engine needs no extra library: a fast non-cryptographic checksum (several GB/s on one core,
// 8 bytes a step) that detects flipped bits and torn writes in the files rematch writes. It is not a defence
// against someone who alters a file on purpose. Feed it in pieces of any size: the digest equals that of the
// bytes fed in one piece (`xxhsum -H64` prints the same value for the same bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rematch {

class Xxh64 {
 public:
  explicit Xxh64(uint64_t seed = 0);
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  uint64_t digest() const;  // the hash of everything fed so far; more may be fed afterwards
  std::string hex() const;  // digest() as 16 lowercase hex digits

 private:
  uint64_t v_[4];
  uint64_t total_ = 0;
  unsigned char buf_[32];
  size_t buffered_ = 0;
  uint64_t seed_;
};

// The hash of one byte string, as 16 lowercase hex digits.
std::string xxh64_hex(std::string_view bytes, uint64_t seed = 0);

}  // namespace rematch
