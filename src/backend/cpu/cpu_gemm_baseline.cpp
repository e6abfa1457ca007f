// backend/cpu/cpu_gemm_baseline.cpp: the x86-64 baseline kernels of cpu_gemm.h (SSE2, no FMA) --
// float32 6x8 tiles and float64 6x4 (12 xmm accumulators of the 16 registers), for CPUs without
// AVX2 and for EMBER_CPU_ISA=baseline.
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

}  // namespace ember::cpu
