// bench/fma_peak.cpp: measures float32 FMA throughput -- ten independent accumulator chains per
// thread (enough to cover FMA latency on two ports), on every thread at once.
#include "fma_peak.h"

#include <immintrin.h>

#include <chrono>
#include <cstdint>
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

float chains_scalar(int64_t iters) {
  float acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = static_cast<float>(k);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * 0.9999999f + 1e-3f;
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

}  // namespace

PeakRun measure_fma_peak(int threads) {
  PeakRun run;
  int lanes = 1;
  float (*body)(int64_t) = chains_scalar;
  run.isa = "scalar";
  if (__builtin_cpu_supports("avx512f")) {
    body = chains_avx512;
    lanes = 16;
    run.isa = "AVX-512";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
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
