// backend/cpu/cpu_half_convert.cpp: the conversion spans of cpu_half_convert.h.
#include "backend/cpu/cpu_half_convert.h"

#include <bit>
#include <cmath>

#include "backend/cpu/cpu_isa.h"

#if defined(EMBER_HAVE_ISA_CLONES)
#include <immintrin.h>
#endif

namespace ember::cpu {

namespace {

[[gnu::always_inline]] inline void to_bfloat16(BFloat16* d, const float* s, int64_t n) {
  auto* out = reinterpret_cast<uint16_t*>(d);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = std::bit_cast<uint32_t>(s[i]);
    const uint16_t rounded = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    out[i] = (u & 0x7fffffffu) > 0x7f800000u ? uint16_t{0x7fc0} : rounded;
  }
}

[[gnu::always_inline]] inline void from_bfloat16(float* d, const BFloat16* s, int64_t n) {
  const auto* in = reinterpret_cast<const uint16_t*>(s);
  for (int64_t i = 0; i < n; ++i) d[i] = std::bit_cast<float>(static_cast<uint32_t>(in[i]) << 16);
}

#if defined(EMBER_HAVE_ISA_CLONES)
// F16C, part of x86-64-v3 (every AVX2 CPU). The hardware rounds to nearest even with subnormals
// and infinities as half.h does; NaN lanes are redone by the scalar rule (0x7e00 with the sign).
EMBER_TARGET_AVX2 void to_half_f16c(Half* d, const float* s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(s + i);
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    if (!_mm256_testz_ps(nan, nan))
      for (int k = 0; k < 8; ++k) d[i + k] = Half(s[i + k]);
  }
  for (; i < n; ++i) d[i] = Half(s[i]);
}

EMBER_TARGET_AVX2 void from_half_f16c(float* d, const Half* s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) d[i] = static_cast<float>(s[i]);
}
#endif

bool has_f16c() {
#if defined(EMBER_HAVE_ISA_CLONES)
  return cpu_isa() >= CpuIsa::kAvx2;
#else
  return false;
#endif
}

}  // namespace

void convert(Half* dst, const float* src, int64_t n) {
#if defined(EMBER_HAVE_ISA_CLONES)
  if (has_f16c()) return to_half_f16c(dst, src, n);
#endif
  for (int64_t i = 0; i < n; ++i) dst[i] = Half(src[i]);
}

void convert(float* dst, const Half* src, int64_t n) {
#if defined(EMBER_HAVE_ISA_CLONES)
  if (has_f16c()) return from_half_f16c(dst, src, n);
#endif
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

void convert(BFloat16* dst, const float* src, int64_t n) {
  isa_dispatch<&to_bfloat16>(dst, src, n);
}

void convert(float* dst, const BFloat16* src, int64_t n) {
  isa_dispatch<&from_bfloat16>(dst, src, n);
}

}  // namespace ember::cpu
