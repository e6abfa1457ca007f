// kernels/sort_keys.h: each dtype's elements as unsigned radix keys whose unsigned order is the
// sort order of the values -- integers with the sign bit flipped, floats by sign-magnitude flip
// with every NaN one key above +inf and -0.0 the key of 0.0 -- so the CPU's radix sort, its
// top-k selection and CUB's radix sort on CUDA all order elements the same way. Descending
// order is the bitwise complement of the key. Host and device.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ember/half.h"
#include "kernels/host_device.h"

namespace ember::kernels {

// The key type of T: as wide as T.
template <class T>
using sort_key_t =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

// Sign-magnitude float bits u (sign bit `sign`, exponent-all-ones-and-mantissa-nonzero NaN
// above `inf`) to an ordered key.
template <class U>
EMBER_HOST_DEVICE constexpr U float_bits_key(U u, U sign, U inf, U quiet_nan) {
  if ((u & static_cast<U>(~sign)) > inf) u = quiet_nan;  // every NaN the same, above +inf
  if (u == sign) u = 0;                                  // -0.0 as 0.0
  return (u & sign) ? static_cast<U>(~u) : static_cast<U>(u | sign);
}

template <class T>
EMBER_HOST_DEVICE inline sort_key_t<T> sort_key(T v, bool descending) {
  using K = sort_key_t<T>;
  K k;
  if constexpr (std::is_same_v<T, bool>) {
    k = v ? 1 : 0;
  } else if constexpr (std::is_same_v<T, Half>) {
    k = float_bits_key<uint16_t>(v.x, 0x8000u, 0x7c00u, 0x7e00u);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    k = float_bits_key<uint16_t>(v.x, 0x8000u, 0x7f80u, 0x7fc0u);
  } else if constexpr (std::is_same_v<T, float>) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    k = float_bits_key<uint32_t>(u, 0x80000000u, 0x7f800000u, 0x7fc00000u);
  } else if constexpr (std::is_same_v<T, double>) {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    k = float_bits_key<uint64_t>(u, 0x8000000000000000ull, 0x7ff0000000000000ull,
                                 0x7ff8000000000000ull);
  } else if constexpr (std::is_signed_v<T>) {
    k = static_cast<K>(static_cast<K>(v) ^ (K{1} << (8 * sizeof(T) - 1)));
  } else {
    k = static_cast<K>(v);
  }
  return descending ? static_cast<K>(~k) : k;
}

}  // namespace ember::kernels
