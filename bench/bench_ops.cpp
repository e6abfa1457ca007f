// bench/bench_ops.cpp: Google Benchmark micro benchmarks of ember alone -- per-op dispatch cost on
// tiny tensors, memory-bound element-wise ops and reductions at 32M floats, row softmax and sgemm.
// Run: ./build/bench/bench/ember_bench (see docs/PERFORMANCE.md for the numbers measured so far).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "chain10.h"
#include "ember/ember.h"

namespace {

constexpr int64_t kLarge = int64_t{32} << 20;  // 32M floats, 128 MiB per tensor

using ember_bench::chain10;

// Dispatch cost: a + b on two 3-element float tensors, allocation of the result included.
void BM_AddTiny(benchmark::State& state) {
  ember::Tensor a = ember::rand({3}), b = ember::rand({3});
  for (auto _ : state) {
    ember::Tensor c = a + b;
    benchmark::DoNotOptimize(c.raw_data_ptr());
  }
}
BENCHMARK(BM_AddTiny);

// In place, so no result allocation: the cost of the checks and the kernel call alone.
void BM_AddInplaceTiny(benchmark::State& state) {
  ember::Tensor a = ember::rand({3}), b = ember::rand({3});
  for (auto _ : state) {
    a += b;
    benchmark::DoNotOptimize(a.raw_data_ptr());
  }
}
BENCHMARK(BM_AddInplaceTiny);

void BM_Chain10Tiny(benchmark::State& state) {
  ember::Tensor a = ember::rand({3}), b = ember::rand({3}) + 1;
  for (auto _ : state) {
    ember::Tensor y = chain10(a, b);
    benchmark::DoNotOptimize(y.raw_data_ptr());
  }
}
BENCHMARK(BM_Chain10Tiny);

// Memory bound: reads 2 and writes 1 float per element.
void BM_Add32M(benchmark::State& state) {
  ember::Tensor a = ember::rand({kLarge}), b = ember::rand({kLarge});
  for (auto _ : state) {
    ember::Tensor c = a + b;
    benchmark::DoNotOptimize(c.raw_data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 3 * kLarge * int64_t{sizeof(float)});
}
BENCHMARK(BM_Add32M)->Unit(benchmark::kMillisecond)->MinTime(0.5)->UseRealTime();

void BM_Sum32M(benchmark::State& state) {
  ember::Tensor a = ember::rand({kLarge});
  for (auto _ : state) {
    ember::Tensor s = a.sum();
    benchmark::DoNotOptimize(s.raw_data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * kLarge * int64_t{sizeof(float)});
}
BENCHMARK(BM_Sum32M)->Unit(benchmark::kMillisecond)->MinTime(0.5)->UseRealTime();

// Softmax over the last dim of (8192, 4096): 32M floats.
void BM_SoftmaxRows(benchmark::State& state) {
  ember::Tensor x = ember::randn({8192, 4096});
  for (auto _ : state) {
    ember::Tensor y = x.softmax(1);
    benchmark::DoNotOptimize(y.raw_data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 2 * x.numel() * int64_t{sizeof(float)});
}
BENCHMARK(BM_SoftmaxRows)->Unit(benchmark::kMillisecond)->MinTime(0.5)->UseRealTime();

// Square float32 matrix multiply, n x n times n x n: 2 n^3 FLOP per iteration.
void BM_Sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  ember::Tensor a = ember::randn({n, n}), b = ember::randn({n, n});
  for (auto _ : state) {
    ember::Tensor c = ember::mm(a, b);
    benchmark::DoNotOptimize(c.raw_data_ptr());
  }
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n),
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::OneK::kIs1000);
}
BENCHMARK(BM_Sgemm)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
