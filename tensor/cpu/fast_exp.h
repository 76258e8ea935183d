// exp for float32 written in plain arithmetic so that GCC vectorises loops calling it (libm's expf is a call
// the vectoriser cannot see through without -ffast-math). Cody–Waite range reduction x = n·ln2 + r, a
// degree-6 polynomial for e^r (Cephes expf coefficients), then 2^n by building the exponent bits.
// Max error about 1 ulp on [-87.3, 88.7]; below -87.3 the result is 0 (true exp is below FLT_MIN there),
// above 88.7 it is +inf, NaN stays NaN.
#pragma once

#include <cstdint>

namespace rematch::cpu {

inline float fast_expf(float x) {
  const float clamped = x < -87.33654f ? -87.33654f : (x > 88.72283f ? 88.72283f : x);
  // Round to nearest by adding and removing 1.5·2^23 (floorf does not vectorise under strict FP semantics).
  const float n = (clamped * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  const float scale = __builtin_bit_cast(float, bits);
  float y = p * scale;
  y = x < -87.33654f ? 0.0f : y;
  y = x > 88.72283f ? __builtin_inff() : y;
  return x != x ? x : y;
}

}  // namespace rematch::cpu
