// bench/fma_peak.cpp: measures float32 FMA throughput at the instruction-set level ember runs at
// -- ten independent accumulator chains per thread (enough to cover FMA latency on two ports), on
// every thread at once.
#include "fma_peak.h"

#include "ember/ops.h"

#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace ember_bench {

namespace {

constexpr int64_t kIters = 20'000'000;
constexpr int kChains = 10;

__attribute__((target("avx512f"))) float chains_avx512(int64_t iters) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(static_cast<float>(k));
  const __m512 b = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-3f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], b, c);
  __m512 s = acc[0];
  for (int k = 1; k < kChains; ++k) s = _mm512_add_ps(s, acc[k]);
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) float chains_avx2(int64_t iters) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(static_cast<float>(k));
  const __m256 b = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-3f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], b, c);
  __m256 s = acc[0];
  for (int k = 1; k < kChains; ++k) s = _mm256_add_ps(s, acc[k]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

// The x86-64 baseline has no FMA: a multiply and an add (SSE2, 4 lanes), as ember's baseline GEMM.
float chains_sse2(int64_t iters) {
  __m128 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm_set1_ps(static_cast<float>(k));
  const __m128 b = _mm_set1_ps(0.9999999f), c = _mm_set1_ps(1e-3f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = _mm_add_ps(_mm_mul_ps(acc[k], b), c);
  __m128 s = acc[0];
  for (int k = 1; k < kChains; ++k) s = _mm_add_ps(s, acc[k]);
  float out[4];
  _mm_storeu_ps(out, s);
  return out[0] + out[3];
}

}  // namespace

PeakRun measure_fma_peak(int threads) {
  PeakRun run;
  // The level ember's kernels run at (EMBER_CPU_ISA caps it), so that ratios compare like with
  // like.
  int lanes = 4;
  float (*body)(int64_t) = chains_sse2;
  run.isa = "baseline (SSE2 mul+add)";
  const std::string isa = ember::get_cpu_capability();
  if (isa == "avx512" || isa == "avx512_bf16" || isa == "amx") {
    body = chains_avx512;
    lanes = 16;
    run.isa = "AVX-512";
  } else if (isa == "avx2") {
    body = chains_avx2;
    lanes = 8;
    run.isa = "AVX2+FMA";
  }
  std::vector<float> sink(threads);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[t] = body(kIters); });
  for (auto& th : pool) th.join();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  volatile float keep = 0;
  for (float s : sink) keep = keep + s;
  run.flops = 2.0 * lanes * kChains * static_cast<double>(kIters) * threads;
  return run;
}

}  // namespace ember_bench
