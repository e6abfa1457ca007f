// backend/cpu/cpu_gemm_avx2.cpp: the AVX2 + FMA kernels of cpu_gemm.h (x86-64-v3: AMD Zen, Intel
// since Haswell) -- float32 6x16 tiles (also for bfloat16 and float16 operands, widened while
// packed; F16C is part of x86-64-v3) and float64 6x8 (12 ymm accumulators, 2 for b, 1
// broadcast of the 16 registers), block sizes for 32 KiB L1d / 256-512 KiB L2 per core.
#include <immintrin.h>

#include <cstdint>

#define EMBER_GEMM_TARGET [[gnu::target("avx2,fma,f16c")]]
#define EMBER_GEMM_INLINE EMBER_GEMM_TARGET [[gnu::always_inline]] inline
#define EMBER_GEMM_NS gemm_avx2
#include "backend/cpu/cpu_gemm_kernel.h"

namespace ember::cpu {
namespace gemm_avx2 {

// Lane masks for maskload/maskstore: the first n of 8 (or 4 64-bit) lanes all ones. The 64-bit
// masks are the 32-bit ones read two lanes at a time.
alignas(32) constexpr int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
EMBER_GEMM_INLINE __m256i mask32(int n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + 8 - n));
}
EMBER_GEMM_INLINE __m256i mask64(int n) {
  return mask32(2 * n);
}

struct VecF32 {
  using T = float;
  using R = __m256;
  static constexpr int kLanes = 8;
  static constexpr bool kTranspose = true;
  EMBER_GEMM_INLINE static R zero() { return _mm256_setzero_ps(); }
  EMBER_GEMM_INLINE static R load(const T* p) { return _mm256_loadu_ps(p); }
  EMBER_GEMM_INLINE static void store(T* p, R r) { _mm256_storeu_ps(p, r); }
  EMBER_GEMM_INLINE static R broadcast(T x) { return _mm256_set1_ps(x); }
  EMBER_GEMM_INLINE static R fmadd(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  EMBER_GEMM_INLINE static R add(R a, R b) { return _mm256_add_ps(a, b); }
  // maskload neither reads nor faults on the masked-off lanes.
  EMBER_GEMM_INLINE static R load_partial(const T* p, int n) {
    return _mm256_maskload_ps(p, mask32(n));
  }
  EMBER_GEMM_INLINE static void store_partial(T* p, R r, int n) {
    _mm256_maskstore_ps(p, mask32(n), r);
  }
  // bfloat16 is float32's upper half: widen to 32 bits and shift; float16 through F16C. AVX2 has
  // no 16-bit masked load: partial ones go through a lane buffer.
  EMBER_GEMM_INLINE static R widen(__m128i x, const BFloat16*) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(x), 16));
  }
  EMBER_GEMM_INLINE static R widen(__m128i x, const Half*) { return _mm256_cvtph_ps(x); }
  template <class S>
  EMBER_GEMM_INLINE static R load_src(const S* p) {
    return widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), p);
  }
  template <class S>
  EMBER_GEMM_INLINE static R load_src_partial(const S* p, int n) {
    alignas(16) S lanes[8] = {};
    for (int i = 0; i < n; ++i) lanes[i] = p[i];
    return load_src(lanes);
  }
  // An 8x8 transpose in registers: unpack pairs, shuffle quads, swap 128-bit halves.
  EMBER_GEMM_INLINE static void transpose(R r[8]) {
    R t[8], u[8];
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // u[4h + c], 128-bit half l: column 4l + c of rows 4h .. 4h + 3.
    for (int h = 0; h < 2; ++h) {
      u[4 * h] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
      u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xEE);
      u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
      u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xEE);
    }
    for (int c = 0; c < 4; ++c) {
      r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
      r[4 + c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
    }
  }
};

struct VecF64 {
  using T = double;
  using R = __m256d;
  static constexpr int kLanes = 4;
  static constexpr bool kTranspose = false;
  EMBER_GEMM_INLINE static R zero() { return _mm256_setzero_pd(); }
  EMBER_GEMM_INLINE static R load(const T* p) { return _mm256_loadu_pd(p); }
  EMBER_GEMM_INLINE static void store(T* p, R r) { _mm256_storeu_pd(p, r); }
  EMBER_GEMM_INLINE static R broadcast(T x) { return _mm256_set1_pd(x); }
  EMBER_GEMM_INLINE static R fmadd(R a, R b, R c) { return _mm256_fmadd_pd(a, b, c); }
  EMBER_GEMM_INLINE static R add(R a, R b) { return _mm256_add_pd(a, b); }
  EMBER_GEMM_INLINE static R load_partial(const T* p, int n) {
    return _mm256_maskload_pd(p, mask64(n));
  }
  EMBER_GEMM_INLINE static void store_partial(T* p, R r, int n) {
    _mm256_maskstore_pd(p, mask64(n), r);
  }
  static void transpose(R*) {}
};

}  // namespace gemm_avx2

// A 6-row a micro-panel (6 x KC, 6 KiB) stays in L1; a packed b block (KC x NB, 192 KiB) fits
// in the L2 of Intel client cores (256 KiB) and in half of Zen's (512 KiB).
constinit const GemmKernel<float> kGemmAvx2F32 =
    gemm_avx2::make_gemm_kernel<gemm_avx2::VecF32, 6, 2>("avx2 6x16", 256, 192, 1008);
constinit const GemmKernel<double> kGemmAvx2F64 =
    gemm_avx2::make_gemm_kernel<gemm_avx2::VecF64, 6, 2>("avx2 6x8", 256, 96, 1008);
constinit const GemmKernel<float, BFloat16> kGemmAvx2BF16 =
    gemm_avx2::make_gemm_kernel<gemm_avx2::VecF32, 6, 2, BFloat16>("avx2 6x16 bf16", 256, 192,
                                                                   1008);
constinit const GemmKernel<float, Half> kGemmAvx2F16 =
    gemm_avx2::make_gemm_kernel<gemm_avx2::VecF32, 6, 2, Half>("avx2 6x16 f16", 256, 192, 1008);

}  // namespace ember::cpu
