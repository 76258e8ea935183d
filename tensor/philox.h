// Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and the
// per-element value functions built on it. This header is compiled both by the host compiler (random.cpp)
// and by nvcc (cuda/random.cu): the CPU and CUDA backends call the very same functions, so a (seed, offset)
// pair gives the same numbers on every device.
//
// Element i of a call made with generator state (seed, offset) is a pure function of one Philox block:
// counter = offset + i (64 bits, low word first; words 2 and 3 zero), key = seed (low word first). There is
// no sequential state, so elements can be generated in any order by any number of threads.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define REMATCH_HOST_DEVICE __host__ __device__
#else
#define REMATCH_HOST_DEVICE
#endif

namespace rematch::philox {

struct Block {
  uint32_t w[4];
};

constexpr uint32_t kM0 = 0xD2511F53u;  // round multipliers
constexpr uint32_t kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u;  // key schedule increments (golden ratio, sqrt(3) - 1)
constexpr uint32_t kW1 = 0xBB67AE85u;
constexpr int kRounds = 10;

REMATCH_HOST_DEVICE inline void mul_hilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

// The full 10-round bijection of the counter under the key, exactly as Random123's philox4x32_R(10, ...).
REMATCH_HOST_DEVICE inline Block philox4x32_10(Block ctr, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < kRounds; ++r) {
    if (r > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mul_hilo(kM0, ctr.w[0], &hi0, &lo0);
    mul_hilo(kM1, ctr.w[2], &hi1, &lo1);
    ctr = Block{{hi1 ^ ctr.w[1] ^ k0, lo1, hi0 ^ ctr.w[3] ^ k1, lo0}};
  }
  return ctr;
}

// The block of element `index` for generator state (seed, offset).
REMATCH_HOST_DEVICE inline Block element_block(uint64_t seed, uint64_t offset, uint64_t index) {
  const uint64_t c = offset + index;
  const Block ctr{{static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0u, 0u}};
  return philox4x32_10(ctr, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

REMATCH_HOST_DEVICE inline uint64_t join64(uint32_t lo, uint32_t hi) {
  return static_cast<uint64_t>(lo) | (static_cast<uint64_t>(hi) << 32);
}

// The conversions below are exact (integer shifts and multiplications by powers of two), so they agree
// bit for bit on host and device.
REMATCH_HOST_DEVICE inline float uniform_float(uint32_t w) {  // [0, 1)
  return static_cast<float>(w >> 8) * (1.0f / 16777216.0f);
}
REMATCH_HOST_DEVICE inline double uniform_double(uint32_t lo, uint32_t hi) {  // [0, 1), 53 random bits
  return static_cast<double>(join64(lo, hi) >> 11) * (1.0 / 9007199254740992.0);
}

// Box–Muller with u1 in (0, 1] so log(u1) is finite. It is evaluated in double even for float results:
// host libm and CUDA's float log/cos may differ in the last bit, while their double results, rounded to
// float, agree except in vanishingly rare rounding ties.
REMATCH_HOST_DEVICE inline double box_muller(double u1, double u2) {
  const double two_pi = 6.283185307179586476925286766559;
  return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

REMATCH_HOST_DEVICE inline float normal_float(const Block& b) {
  const double u1 = static_cast<double>((b.w[0] >> 8) + 1u) * (1.0 / 16777216.0);  // (0, 1]
  const double u2 = static_cast<double>(b.w[1] >> 8) * (1.0 / 16777216.0);         // [0, 1)
  return static_cast<float>(box_muller(u1, u2));
}
REMATCH_HOST_DEVICE inline double normal_double(const Block& b) {
  const double u1 = static_cast<double>((join64(b.w[0], b.w[1]) >> 11) + 1u) * (1.0 / 9007199254740992.0);
  return box_muller(u1, uniform_double(b.w[2], b.w[3]));
}

// low + (x mod range) with x the 64-bit word (w0, w1): the modulo bias is below range / 2^64.
REMATCH_HOST_DEVICE inline int64_t randint(const Block& b, int64_t low, uint64_t range) {
  return static_cast<int64_t>(static_cast<uint64_t>(low) + join64(b.w[0], b.w[1]) % range);
}

// Compared with a 53-bit uniform so that p = 1 always and p = 0 never gives true, and small p keep their
// resolution.
REMATCH_HOST_DEVICE inline bool bernoulli(const Block& b, double p) { return uniform_double(b.w[0], b.w[1]) < p; }

// The random 64-bit key that randperm sorts by.
REMATCH_HOST_DEVICE inline uint64_t perm_key(const Block& b) { return join64(b.w[0], b.w[1]); }

}  // namespace rematch::philox
