// backend/cpu/cpu_sgemm_avx512.h: ember's own float32 GEMM for x86 CPUs with AVX-512 -- cache
// blocking, packed panels read from any strides, a 14x32 register-blocked micro-kernel.
#pragma once

#include <cstdint>

namespace ember::cpu {

// One float32 product c = a @ b, any element strides for a and b, c dense row-major.
struct SgemmArgs {
  int64_t m, n, k;
  const float* a;  // a: (m, k), element (i, p) at a[i * a_rs + p * a_cs]
  int64_t a_rs, a_cs;
  const float* b;  // b: (k, n), element (p, j) at b[p * b_rs + j * b_cs]
  int64_t b_rs, b_cs;
  float* c;  // c: (m, n), element (i, j) at c[i * ldc + j]
  int64_t ldc;
};

// Whether this CPU runs sgemm_avx512 (AVX-512 F/BW/DQ/VL and FMA).
bool sgemm_avx512_supported();

// c = a @ b (c's old contents are ignored). Uses up to `threads` OpenMP threads; each element of c
// sums over k in the same order whatever the thread count, so results do not depend on it.
// Call only when sgemm_avx512_supported().
void sgemm_avx512(const SgemmArgs& g, int threads);

}  // namespace ember::cpu
