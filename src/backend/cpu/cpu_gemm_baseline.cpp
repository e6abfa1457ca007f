// backend/cpu/cpu_gemm_baseline.cpp: the x86-64 baseline kernels of cpu_gemm.h (SSE2, no FMA) --
// float32 6x8 tiles (also for bfloat16 and float16 operands, widened while packed: bfloat16 by
// interleaving with zeros, float16 by moving its fields into place) and float64 6x4 (12 xmm
// accumulators of the 16 registers), for CPUs without AVX2 and for EMBER_CPU_ISA=baseline.
#include <emmintrin.h>
#include <xmmintrin.h>

#define EMBER_GEMM_TARGET
#define EMBER_GEMM_INLINE [[gnu::always_inline]] inline
#define EMBER_GEMM_NS gemm_baseline
#include "backend/cpu/cpu_gemm_kernel.h"

namespace ember::cpu {
namespace gemm_baseline {

// Partial loads and stores go through a lane buffer: SSE2 has no masked forms.
struct VecF32 {
  using T = float;
  using R = __m128;
  static constexpr int kLanes = 4;
  static constexpr bool kTranspose = true;
  EMBER_GEMM_INLINE static R zero() { return _mm_setzero_ps(); }
  EMBER_GEMM_INLINE static R load(const T* p) { return _mm_loadu_ps(p); }
  EMBER_GEMM_INLINE static void store(T* p, R r) { _mm_storeu_ps(p, r); }
  EMBER_GEMM_INLINE static R broadcast(T x) { return _mm_set1_ps(x); }
  EMBER_GEMM_INLINE static R fmadd(R a, R b, R c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  EMBER_GEMM_INLINE static R add(R a, R b) { return _mm_add_ps(a, b); }
  EMBER_GEMM_INLINE static R load_partial(const T* p, int n) {
    alignas(16) T lanes[4] = {};
    for (int i = 0; i < n; ++i) lanes[i] = p[i];
    return _mm_load_ps(lanes);
  }
  EMBER_GEMM_INLINE static void store_partial(T* p, R r, int n) {
    alignas(16) T lanes[4];
    _mm_store_ps(lanes, r);
    for (int i = 0; i < n; ++i) p[i] = lanes[i];
  }
  EMBER_GEMM_INLINE static void transpose(R r[4]) { _MM_TRANSPOSE4_PS(r[0], r[1], r[2], r[3]); }
  EMBER_GEMM_INLINE static R load_src(const BFloat16* p) {
    __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), x));
  }
  // float16 without F16C, exactly: move exponent and mantissa into place and rebias the exponent
  // (by twice that for infinities and NaNs); a subnormal (or zero) x m 2^-24 is built as the float
  // 2^-14 (1 + m 2^-10) and has 2^-14 taken away.
  EMBER_GEMM_INLINE static R load_src(const Half* p) {
    const __m128i h = _mm_unpacklo_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)),
                                         _mm_setzero_si128());
    const __m128i rebias = _mm_set1_epi32(0x38000000), exp_mask = _mm_set1_epi32(0x0f800000);
    __m128i o = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x7fff)), 13);
    const __m128i e = _mm_and_si128(o, exp_mask);
    o = _mm_add_epi32(o, rebias);
    o = _mm_add_epi32(o, _mm_and_si128(_mm_cmpeq_epi32(e, exp_mask), rebias));
    const __m128 tiny = _mm_sub_ps(_mm_castsi128_ps(_mm_add_epi32(o, _mm_set1_epi32(0x00800000))),
                                   _mm_castsi128_ps(_mm_set1_epi32(0x38800000)));
    const __m128 is_tiny = _mm_castsi128_ps(_mm_cmpeq_epi32(e, _mm_setzero_si128()));
    const __m128 f =
        _mm_or_ps(_mm_and_ps(is_tiny, tiny), _mm_andnot_ps(is_tiny, _mm_castsi128_ps(o)));
    return _mm_or_ps(
        f, _mm_castsi128_ps(_mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16)));
  }
  template <class S>
  EMBER_GEMM_INLINE static R load_src_partial(const S* p, int n) {
    S lanes[4] = {};
    for (int i = 0; i < n; ++i) lanes[i] = p[i];
    return load_src(static_cast<const S*>(lanes));
  }
};

struct VecF64 {
  using T = double;
  using R = __m128d;
  static constexpr int kLanes = 2;
  static constexpr bool kTranspose = false;
  EMBER_GEMM_INLINE static R zero() { return _mm_setzero_pd(); }
  EMBER_GEMM_INLINE static R load(const T* p) { return _mm_loadu_pd(p); }
  EMBER_GEMM_INLINE static void store(T* p, R r) { _mm_storeu_pd(p, r); }
  EMBER_GEMM_INLINE static R broadcast(T x) { return _mm_set1_pd(x); }
  EMBER_GEMM_INLINE static R fmadd(R a, R b, R c) { return _mm_add_pd(_mm_mul_pd(a, b), c); }
  EMBER_GEMM_INLINE static R add(R a, R b) { return _mm_add_pd(a, b); }
  EMBER_GEMM_INLINE static R load_partial(const T* p, int n) {
    alignas(16) T lanes[2] = {};
    for (int i = 0; i < n; ++i) lanes[i] = p[i];
    return _mm_load_pd(lanes);
  }
  EMBER_GEMM_INLINE static void store_partial(T* p, R r, int n) {
    alignas(16) T lanes[2];
    _mm_store_pd(lanes, r);
    for (int i = 0; i < n; ++i) p[i] = lanes[i];
  }
  static void transpose(R*) {}
};

}  // namespace gemm_baseline

constinit const GemmKernel<float> kGemmBaselineF32 =
    gemm_baseline::make_gemm_kernel<gemm_baseline::VecF32, 6, 2>("baseline 6x8", 256, 192, 1008);
constinit const GemmKernel<double> kGemmBaselineF64 =
    gemm_baseline::make_gemm_kernel<gemm_baseline::VecF64, 6, 2>("baseline 6x4", 256, 96, 1008);
constinit const GemmKernel<float, BFloat16> kGemmBaselineBF16 =
    gemm_baseline::make_gemm_kernel<gemm_baseline::VecF32, 6, 2, BFloat16>("baseline 6x8 bf16", 256,
                                                                           192, 1008);
constinit const GemmKernel<float, Half> kGemmBaselineF16 =
    gemm_baseline::make_gemm_kernel<gemm_baseline::VecF32, 6, 2, Half>("baseline 6x8 f16", 256, 192,
                                                                       1008);

}  // namespace ember::cpu
