// The digest of what a program reads back from the device (emulator.h, digest_copy): with
// REMATCH_CUDA_EMU_DIGEST=FILE, every copy from device to host memory is hashed (FNV-1a 64 over its bytes and
// length), the hashes are summed (a sum: copies made by several host threads in any order give the same digest),
// and at exit one line is appended to FILE: "<digest> <bytes> <copies> <command line>". Two runs that differ only
// in the emulator's schedule (REMATCH_CUDA_EMU_SCHEDULE=reverse) or its SM count give the same line when nothing the
// host sees depends on the order threads and blocks ran in: a race or an order-dependent sum changes some bit,
// which tests with tolerances would let through. tools/cuda_emu/compare_schedules.sh compares them test by test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "tools/cuda_emu/emulator.h"

namespace cuda_emu {
namespace {

struct Digest {
  std::mutex mutex;
  uint64_t sum = 0, bytes = 0, copies = 0;
};
Digest& digest() {
  static Digest* d = new Digest;  // never destroyed: write_digest, run at exit, may come after static destructors
  return *d;
}
const char* digest_file() {
  static const char* path = [] {
    const char* v = std::getenv("REMATCH_CUDA_EMU_DIGEST");
    return v != nullptr && *v != '\0' ? v : nullptr;
  }();
  return path;
}

std::string command_line() {
  std::string line;
  if (FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
    for (int c; (c = std::fgetc(f)) != EOF;) line += c == '\0' ? ' ' : static_cast<char>(c);
    std::fclose(f);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

void write_digest() {
  Digest& d = digest();
  std::lock_guard<std::mutex> lock(d.mutex);
  FILE* f = std::fopen(digest_file(), "a");
  if (f == nullptr) {
    std::fprintf(stderr, "cuda emulator: REMATCH_CUDA_EMU_DIGEST=%s cannot be opened for appending\n", digest_file());
    return;
  }
  std::fprintf(f, "%016llx %llu %llu %s\n", static_cast<unsigned long long>(d.sum),
               static_cast<unsigned long long>(d.bytes), static_cast<unsigned long long>(d.copies),
               command_line().c_str());
  std::fclose(f);
}

}  // namespace

void digest_copy(const void* src, size_t bytes) {
  if (digest_file() == nullptr) return;
  static const bool registered = (std::atexit(write_digest), true);
  (void)registered;
  uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(src);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  h = (h ^ bytes) * 1099511628211ull;
  Digest& d = digest();
  std::lock_guard<std::mutex> lock(d.mutex);
  d.sum += h;
  d.bytes += bytes;
  ++d.copies;
}

}  // namespace cuda_emu
