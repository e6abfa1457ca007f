// backend/cpu/cpu_gemm_avx512.cpp: the AVX-512 kernels of cpu_gemm.h -- float32 14x32 tiles (28
// zmm accumulators, also for bfloat16 and float16 operands widened while packed), float64 14x16,
// block sizes for 48 KiB L1d / 2 MiB L2 per core.
#include <immintrin.h>

#define EMBER_GEMM_TARGET [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,fma,f16c")]]
#define EMBER_GEMM_INLINE EMBER_GEMM_TARGET [[gnu::always_inline]] inline
#define EMBER_GEMM_NS gemm_avx512
#include "backend/cpu/cpu_gemm_kernel.h"

#include "backend/cpu/cpu_avx512_transpose.h"

namespace ember::cpu {
namespace gemm_avx512 {

// Masks of the first n lanes.
EMBER_GEMM_INLINE __mmask16 mask16(int n) {
  return static_cast<__mmask16>((1u << n) - 1);
}
EMBER_GEMM_INLINE __mmask8 mask8(int n) {
  return static_cast<__mmask8>((1u << n) - 1);
}

struct VecF32 {
  using T = float;
  using R = __m512;
  static constexpr int kLanes = 16;
  static constexpr bool kTranspose = true;
  EMBER_GEMM_INLINE static R zero() { return _mm512_setzero_ps(); }
  EMBER_GEMM_INLINE static R load(const T* p) { return _mm512_loadu_ps(p); }
  EMBER_GEMM_INLINE static void store(T* p, R r) { _mm512_storeu_ps(p, r); }
  EMBER_GEMM_INLINE static R broadcast(T x) { return _mm512_set1_ps(x); }
  EMBER_GEMM_INLINE static R fmadd(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  EMBER_GEMM_INLINE static R add(R a, R b) { return _mm512_add_ps(a, b); }
  EMBER_GEMM_INLINE static R load_partial(const T* p, int n) {
    return _mm512_maskz_loadu_ps(mask16(n), p);
  }
  EMBER_GEMM_INLINE static void store_partial(T* p, R r, int n) {
    _mm512_mask_storeu_ps(p, mask16(n), r);
  }
  // bfloat16 is float32's upper half: widen to 32 bits and shift; float16 through F16C. The
  // all-lanes maskz forms, for the reason of unpacklo above.
  EMBER_GEMM_INLINE static R widen_bf16(__m256i x) {
    return _mm512_castsi512_ps(
        _mm512_maskz_slli_epi32(0xFFFF, _mm512_maskz_cvtepu16_epi32(0xFFFF, x), 16));
  }
  EMBER_GEMM_INLINE static R widen_f16(__m256i x) { return _mm512_maskz_cvtph_ps(0xFFFF, x); }
  EMBER_GEMM_INLINE static R load_src(const BFloat16* p) {
    return widen_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  EMBER_GEMM_INLINE static R load_src(const Half* p) {
    return widen_f16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  EMBER_GEMM_INLINE static R load_src_partial(const BFloat16* p, int n) {
    return widen_bf16(_mm256_maskz_loadu_epi16(mask16(n), p));
  }
  EMBER_GEMM_INLINE static R load_src_partial(const Half* p, int n) {
    return widen_f16(_mm256_maskz_loadu_epi16(mask16(n), p));
  }
  // A 16x16 transpose in registers.
  EMBER_GEMM_INLINE static void transpose(R r[16]) { avx512::transpose16(r); }
};

struct VecF64 {
  using T = double;
  using R = __m512d;
  static constexpr int kLanes = 8;
  static constexpr bool kTranspose = false;
  EMBER_GEMM_INLINE static R zero() { return _mm512_setzero_pd(); }
  EMBER_GEMM_INLINE static R load(const T* p) { return _mm512_loadu_pd(p); }
  EMBER_GEMM_INLINE static void store(T* p, R r) { _mm512_storeu_pd(p, r); }
  EMBER_GEMM_INLINE static R broadcast(T x) { return _mm512_set1_pd(x); }
  EMBER_GEMM_INLINE static R fmadd(R a, R b, R c) { return _mm512_fmadd_pd(a, b, c); }
  EMBER_GEMM_INLINE static R add(R a, R b) { return _mm512_add_pd(a, b); }
  EMBER_GEMM_INLINE static R load_partial(const T* p, int n) {
    return _mm512_maskz_loadu_pd(mask8(n), p);
  }
  EMBER_GEMM_INLINE static void store_partial(T* p, R r, int n) {
    _mm512_mask_storeu_pd(p, mask8(n), r);
  }
  static void transpose(R*) {}
};

}  // namespace gemm_avx512

// A 14-row a micro-panel (14 x KC) stays in L1, a packed b block (KC x NB, 1 MiB) in L2. KC 512
// rather than 384 for float32: a K of 1024 then takes 2 passes over c instead of 3 (6 % faster at
// 1024^3).
constinit const GemmKernel<float> kGemmAvx512F32 =
    gemm_avx512::make_gemm_kernel<gemm_avx512::VecF32, 14, 2>("avx512 14x32", 512, 512, 2016);
constinit const GemmKernel<double> kGemmAvx512F64 =
    gemm_avx512::make_gemm_kernel<gemm_avx512::VecF64, 14, 2>("avx512 14x16", 256, 512, 2016);
constinit const GemmKernel<float, BFloat16> kGemmAvx512BF16 =
    gemm_avx512::make_gemm_kernel<gemm_avx512::VecF32, 14, 2, BFloat16>("avx512 14x32 bf16", 512,
                                                                        512, 2016);
constinit const GemmKernel<float, Half> kGemmAvx512F16 =
    gemm_avx512::make_gemm_kernel<gemm_avx512::VecF32, 14, 2, Half>("avx512 14x32 f16", 512, 512,
                                                                    2016);

}  // namespace ember::cpu
