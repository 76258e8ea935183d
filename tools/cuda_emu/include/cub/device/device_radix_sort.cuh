// CUB's DeviceRadixSort::SortPairs for the CUDA emulator (tools/cuda_emu/include/cuda_runtime.h): a stable
// sort of (key, value) pairs on bits [begin_bit, end_bit) of each key's radix image, as CUB orders them
// (unsigned as is; signed with the sign bit flipped; floating point with every bit flipped when negative and the
// sign bit flipped otherwise, so -0.0 sorts before +0.0). The first call (temp == nullptr) asks for scratch
// bytes, as CUB's does.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

namespace cub {
struct DeviceRadixSort {
  template <class K> static uint64_t radix_image(K key) {
    using U = std::conditional_t<sizeof(K) == 8, uint64_t,
                                 std::conditional_t<sizeof(K) == 4, uint32_t,
                                                    std::conditional_t<sizeof(K) == 2, uint16_t, uint8_t>>>;
    U bits;
    std::memcpy(&bits, &key, sizeof(K));
    constexpr U sign = static_cast<U>(U(1) << (8 * sizeof(K) - 1));
    if (std::is_floating_point<K>::value) {
      bits = (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits ^ sign);
    } else if (std::is_signed<K>::value) {
      bits = static_cast<U>(bits ^ sign);
    }
    return bits;
  }

  template <class K, class V, class N>
  static cudaError_t SortPairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                               V* values_out, N num_items, int begin_bit = 0, int end_bit = sizeof(K) * 8,
                               cudaStream_t stream = nullptr) {
    const size_t n = static_cast<size_t>(num_items);
    if (temp == nullptr) {
      temp_bytes = n * (sizeof(K) + sizeof(V)) + 1;
      return cudaSuccess;
    }
    if (begin_bit < 0 || end_bit > static_cast<int>(8 * sizeof(K)) || begin_bit > end_bit) return cudaErrorInvalidValue;
    const int width = end_bit - begin_bit;
    const uint64_t field = width >= 64 ? ~uint64_t(0) : ((uint64_t(1) << width) - 1);
    std::vector<uint64_t> radix(n);
    for (size_t i = 0; i < n; ++i) radix[i] = (radix_image(keys_in[i]) >> begin_bit) & field;
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return radix[a] < radix[b]; });
    std::vector<K> keys(n);
    std::vector<V> values(n);
    for (size_t i = 0; i < n; ++i) {
      keys[i] = keys_in[order[i]];
      values[i] = values_in[order[i]];
    }
    std::copy(keys.begin(), keys.end(), keys_out);
    std::copy(values.begin(), values.end(), values_out);
    return cudaSuccess;
  }
};
}  // namespace cub
