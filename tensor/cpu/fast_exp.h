// exp for float32 written in plain arithmetic so that GCC vectorises loops calling it (libm's expf is a call
// the vectoriser cannot see through without -ffast-math). Cody–Waite range reduction x = n·ln2 + r, a
// degree-6 polynomial for e^r (Cephes expf coefficients), then 2^n by adding n to the exponent bits.
// Max error about 1 ulp on [-87.3, 88.7]; below -87.3 the result is 0 (true exp is below FLT_MIN there),
// above 88.7 it is +inf, NaN stays NaN. Every step is defined for every input, NaN and ±inf included (no
// float-to-int conversion, no shift of a negative value), and there are no branches, only selects.
#pragma once

#include <cstdint>

namespace rematch::cpu {

inline float fast_expf(float x) {
  const float clamped = x < -87.33654f ? -87.33654f : (x > 88.72283f ? 88.72283f : x);
  // Round to nearest by adding and removing 1.5·2^23 (floorf does not vectorise under strict FP semantics).
  // t is then an integer in [2^23, 2^24), so its bits are 0x4B400000 + n, with n in [-126, 128].
  const float t = clamped * 1.44269504088896341f + 12582912.0f;
  const float n = t - 12582912.0f;
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // p·2^n: n added to p's exponent field, read from t's bits in unsigned arithmetic (converting a NaN to an
  // integer would be undefined; a NaN lane computes garbage here and is replaced below). The sum stays a normal
  // float over the clamped range: n = 128 only with r < 0 (p < 1), n = -126 only with r > 0 (p > 1). Building
  // 2^n alone would not: 2^128 has no exponent bits, which gave +inf for x in [88.38, 88.72].
  const uint32_t shift = (__builtin_bit_cast(uint32_t, t) - 0x4B400000u) << 23;
  float y = __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, p) + shift);
  y = x < -87.33654f ? 0.0f : y;
  y = x > 88.72283f ? __builtin_inff() : y;
  return x != x ? x : y;
}

}  // namespace rematch::cpu
