// ember_cuda_emu/half_types.h: cuda_fp16.h's __half and cuda_bf16.h's __nv_bfloat16 on the
// emulated device -- the 16 bits, with the toolkit's conversions (round to nearest even), by
// ember's own Half and BFloat16 conversions.
#pragma once

#include <cstdint>

#include "ember/half.h"

struct __half {
  uint16_t __x;
  __half() = default;
  __half(float f) : __x(ember::half_detail::half_from_float(f)) {}           // NOLINT
  operator float() const { return ember::half_detail::half_to_float(__x); }  // NOLINT
};
struct __nv_bfloat16 {
  uint16_t __x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : __x(ember::half_detail::bfloat16_from_float(f)) {}    // NOLINT
  operator float() const { return ember::half_detail::bfloat16_to_float(__x); }  // NOLINT
};

inline float __half2float(__half h) {
  return ember::half_detail::half_to_float(h.__x);
}
inline __half __float2half_rn(float f) {
  return __half(f);
}
inline float __bfloat162float(__nv_bfloat16 b) {
  return ember::half_detail::bfloat16_to_float(b.__x);
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  return __nv_bfloat16(f);
}
inline __half __ushort_as_half(unsigned short bits) {
  __half h;
  h.__x = bits;
  return h;
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) {
  __nv_bfloat16 b;
  b.__x = bits;
  return b;
}
