// ember/half.h: the 16-bit floating types -- Half (IEEE binary16, torch.float16) and BFloat16
// (torch.bfloat16) -- stored as their bits, converted to and from float as PyTorch converts:
// round to nearest even, float16 with subnormals and infinities, NaN to bfloat16 0x7fc0 and to
// float16 0x7e00 with the sign. Arithmetic on them converts to float (the ops compute in float and
// store the result in 16 bits, as PyTorch's opmath does). Usable on host and device.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#define EMBER_HALF_HD __host__ __device__
#else
#define EMBER_HALF_HD
#endif

namespace ember {

namespace half_detail {

EMBER_HALF_HD constexpr uint16_t bfloat16_from_float(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

EMBER_HALF_HD constexpr float bfloat16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// Keeps q, or adds one, as round-to-nearest-even decides from the dropped bits rem of `half`'s
// scale (half is the value of the highest dropped bit).
EMBER_HALF_HD constexpr uint32_t round_even(uint32_t q, uint32_t rem, uint32_t half) {
  return q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
}

EMBER_HALF_HD constexpr uint16_t half_from_float(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: infinity
  if (x < 0x38800000u) {  // below 2^-14, float16's smallest normal: a subnormal or zero
    if (x < 0x33000000u) return static_cast<uint16_t>(sign);  // below 2^-25: zero
    const uint32_t e = x >> 23, m = (x & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // m * 2^(e-150) in units of 2^-24
    const uint32_t q = round_even(m >> shift, m & ((1u << shift) - 1), 1u << (shift - 1));
    return static_cast<uint16_t>(sign | q);  // q == 0x400 is the smallest normal, as encoded
  }
  const uint32_t q = round_even((x - 0x38000000u) >> 13, x & 0x1fffu, 0x1000u);
  return static_cast<uint16_t>(sign | q);
}

EMBER_HALF_HD constexpr float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

}  // namespace half_detail

// torch.float16: IEEE binary16.
struct Half {
  uint16_t x = 0;
  Half() = default;
  EMBER_HALF_HD constexpr Half(float f) : x(half_detail::half_from_float(f)) {}  // NOLINT
  EMBER_HALF_HD constexpr operator float() const {
    return half_detail::half_to_float(x);
  }  // NOLINT
  // Compound assignment computes in float and rounds once, as c10's.
  EMBER_HALF_HD constexpr Half& operator+=(float v) { return *this = Half(float(*this) + v); }
  EMBER_HALF_HD constexpr Half& operator-=(float v) { return *this = Half(float(*this) - v); }
  EMBER_HALF_HD constexpr Half& operator*=(float v) { return *this = Half(float(*this) * v); }
  EMBER_HALF_HD constexpr Half& operator/=(float v) { return *this = Half(float(*this) / v); }
  EMBER_HALF_HD static constexpr Half from_bits(uint16_t bits) {
    Half h;
    h.x = bits;
    return h;
  }
};

// torch.bfloat16: float32's sign and exponent with 7 mantissa bits.
struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  EMBER_HALF_HD constexpr BFloat16(float f) : x(half_detail::bfloat16_from_float(f)) {}  // NOLINT
  EMBER_HALF_HD constexpr operator float() const {                                       // NOLINT
    return half_detail::bfloat16_to_float(x);
  }
  // Compound assignment computes in float and rounds once, as c10's.
  EMBER_HALF_HD constexpr BFloat16& operator+=(float v) {
    return *this = BFloat16(float(*this) + v);
  }
  EMBER_HALF_HD constexpr BFloat16& operator-=(float v) {
    return *this = BFloat16(float(*this) - v);
  }
  EMBER_HALF_HD constexpr BFloat16& operator*=(float v) {
    return *this = BFloat16(float(*this) * v);
  }
  EMBER_HALF_HD constexpr BFloat16& operator/=(float v) {
    return *this = BFloat16(float(*this) / v);
  }
  EMBER_HALF_HD static constexpr BFloat16 from_bits(uint16_t bits) {
    BFloat16 b;
    b.x = bits;
    return b;
  }
};

// Half or BFloat16.
template <class T>
inline constexpr bool is_reduced_float_v =
    std::is_same_v<std::remove_cv_t<T>, Half> || std::is_same_v<std::remove_cv_t<T>, BFloat16>;
// A floating type of ember's: float, double, Half or BFloat16.
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

}  // namespace ember

// numeric_limits of the 16-bit types, as c10's.
namespace std {
template <>
class numeric_limits<ember::Half> {
 public:
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false,
                        is_exact = false, has_infinity = true, has_quiet_NaN = true;
  static constexpr int digits = 11, radix = 2;
  EMBER_HALF_HD static constexpr ember::Half min() { return ember::Half::from_bits(0x0400); }
  EMBER_HALF_HD static constexpr ember::Half lowest() { return ember::Half::from_bits(0xfbff); }
  EMBER_HALF_HD static constexpr ember::Half max() { return ember::Half::from_bits(0x7bff); }
  EMBER_HALF_HD static constexpr ember::Half epsilon() { return ember::Half::from_bits(0x1400); }
  EMBER_HALF_HD static constexpr ember::Half infinity() { return ember::Half::from_bits(0x7c00); }
  EMBER_HALF_HD static constexpr ember::Half quiet_NaN() { return ember::Half::from_bits(0x7e00); }
  EMBER_HALF_HD static constexpr ember::Half denorm_min() { return ember::Half::from_bits(0x0001); }
};

template <>
class numeric_limits<ember::BFloat16> {
 public:
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false,
                        is_exact = false, has_infinity = true, has_quiet_NaN = true;
  static constexpr int digits = 8, radix = 2;
  EMBER_HALF_HD static constexpr ember::BFloat16 min() {
    return ember::BFloat16::from_bits(0x0080);
  }
  EMBER_HALF_HD static constexpr ember::BFloat16 lowest() {
    return ember::BFloat16::from_bits(0xff7f);
  }
  EMBER_HALF_HD static constexpr ember::BFloat16 max() {
    return ember::BFloat16::from_bits(0x7f7f);
  }
  EMBER_HALF_HD static constexpr ember::BFloat16 epsilon() {
    return ember::BFloat16::from_bits(0x3c00);
  }
  EMBER_HALF_HD static constexpr ember::BFloat16 infinity() {
    return ember::BFloat16::from_bits(0x7f80);
  }
  EMBER_HALF_HD static constexpr ember::BFloat16 quiet_NaN() {
    return ember::BFloat16::from_bits(0x7fc0);
  }
  EMBER_HALF_HD static constexpr ember::BFloat16 denorm_min() {
    return ember::BFloat16::from_bits(0x0001);
  }
};
}  // namespace std
