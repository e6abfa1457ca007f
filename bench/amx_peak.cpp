// bench/amx_peak.cpp: measures AMX-BF16 throughput -- four independent accumulator tiles fed by
// two a and two b tiles that stay in the tile registers, on every thread at once.
#include "amx_peak.h"

#include <immintrin.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "ember/ops.h"

namespace ember_bench {

namespace {

constexpr int64_t kIters = 2'000'000;
constexpr double kFlopsPerTile = 2.0 * 16 * 16 * 32;

// ldtilecfg's 64 bytes: palette 1; tiles 0-7 of 16 rows (bytes 48..) of 64 bytes (16..). A
// constant: GCC's _tile_loadconfig tells the compiler it reads 8 bytes only, so a buffer filled
// just before could be handed over unfinished.
constexpr std::array<uint8_t, 64> make_config() {
  std::array<uint8_t, 64> config{};
  config[0] = 1;
  for (int t = 0; t < 8; ++t) {
    config[16 + 2 * t] = 64;
    config[48 + t] = 16;
  }
  return config;
}
alignas(64) constexpr std::array<uint8_t, 64> kConfig = make_config();

__attribute__((target("amx-tile,amx-bf16"))) void tile_chains(int64_t iters) {
  alignas(64) static const uint16_t ones[16 * 32] = {};
  _tile_loadconfig(kConfig.data());
  _tile_loadd(4, ones, 64);
  _tile_loadd(5, ones, 64);
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_release();
}

}  // namespace

PeakRun measure_amx_peak(int threads) {
  PeakRun run;
  run.isa = "AMX-BF16";
  if (ember::get_cpu_capability() != "amx") return run;  // ember has the tile permission then
  std::vector<std::thread> pool;
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) pool.emplace_back([] { tile_chains(kIters); });
  for (auto& th : pool) th.join();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.flops = 4 * kFlopsPerTile * static_cast<double>(kIters) * threads;
  return run;
}

}  // namespace ember_bench
