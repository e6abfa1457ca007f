// backend/cpu/cpu_avx512_transpose.h: a 16 x 16 transpose of 32-bit lanes in AVX-512 registers,
// shared by the float32 GEMM packing (cpu_gemm_avx512.cpp) and the bfloat16 one, which moves
// pairs of bfloat16 as 32-bit lanes (cpu_gemm_avx512_bf16.cpp). Included only by files whose
// callers are compiled for AVX-512 (the functions are always inlined into them).
#pragma once

#include <immintrin.h>

namespace ember::cpu::avx512 {

#define EMBER_AVX512_TRANSPOSE_INLINE [[gnu::target("avx512f")]] [[gnu::always_inline]] inline

// The all-lanes masked forms of unpack and shuffle_f32x4: GCC 12's plain forms start from
// _mm512_undefined_ps and then warn -Wmaybe-uninitialized.
EMBER_AVX512_TRANSPOSE_INLINE __m512 unpacklo(__m512 a, __m512 b) {
  return _mm512_mask_unpacklo_ps(a, 0xFFFF, a, b);
}
EMBER_AVX512_TRANSPOSE_INLINE __m512 unpackhi(__m512 a, __m512 b) {
  return _mm512_mask_unpackhi_ps(a, 0xFFFF, a, b);
}
template <int Imm>
EMBER_AVX512_TRANSPOSE_INLINE __m512 shuffle_lanes(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, 0xFFFF, a, b, Imm);
}

// On return r[j] holds lane j of every input r[i] (in lane i).
EMBER_AVX512_TRANSPOSE_INLINE void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = unpacklo(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = unpackhi(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + c], 128-bit lane l: column 4l + c of rows 4i .. 4i + 3.
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    __m512 v_lo = shuffle_lanes<0x88>(u[c], u[4 + c]);
    __m512 v_hi = shuffle_lanes<0xDD>(u[c], u[4 + c]);
    __m512 w_lo = shuffle_lanes<0x88>(u[8 + c], u[12 + c]);
    __m512 w_hi = shuffle_lanes<0xDD>(u[8 + c], u[12 + c]);
    r[c] = shuffle_lanes<0x88>(v_lo, w_lo);
    r[4 + c] = shuffle_lanes<0x88>(v_hi, w_hi);
    r[8 + c] = shuffle_lanes<0xDD>(v_lo, w_lo);
    r[12 + c] = shuffle_lanes<0xDD>(v_hi, w_hi);
  }
}

#undef EMBER_AVX512_TRANSPOSE_INLINE

}  // namespace ember::cpu::avx512
