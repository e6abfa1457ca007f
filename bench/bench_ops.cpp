// bench/bench_ops.cpp: Google Benchmark micro benchmarks of ember alone, for machines without
// LibTorch -- per-op dispatch cost on tiny tensors (with and without autograd), the tutorial's
// training step and an MLP step, memory-bound element-wise ops and reductions at 32M floats, row
// softmax, sgemm and bfloat16 GEMM (square and the language models' Linear shapes, on the
// matrix units and on the widening path), next to the machine's limits measured in the same run
// (FMA peak, AMX-BF16 peak, memcpy).
// Run: ./build/bench/bench/ember_bench (see docs/PERFORMANCE.md for the numbers measured so far).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "amx_peak.h"
#include "chain10.h"
#include "ember/ember.h"
#include "fma_peak.h"
#include "memcpy_limit.h"

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

// Dispatch with autograd recording: both inputs require grad, each add records a node.
void BM_AddTinyRequiresGrad(benchmark::State& state) {
  ember::Tensor a = ember::rand({3}).requires_grad_(), b = ember::rand({3}).requires_grad_();
  for (auto _ : state) {
    ember::Tensor c = a + b;
    benchmark::DoNotOptimize(c.raw_data_ptr());
  }
}
BENCHMARK(BM_AddTinyRequiresGrad);

// The tutorial's training step: Linear(10, 1), batch 32, Adam, MSE.
void BM_TutorialStep(benchmark::State& state) {
  auto model = ember::nn::Linear(10, 1);
  ember::optim::Adam opt(model->parameters());
  ember::Tensor x = ember::rand({32, 10}), y = ember::rand({32, 1});
  for (auto _ : state) {
    ember::Tensor loss = ember::nn::F::mse_loss(model(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}
BENCHMARK(BM_TutorialStep);

// An MLP step: 784-256-10, batch 64, Adam, cross-entropy.
void BM_MlpStep(benchmark::State& state) {
  auto model = ember::nn::Sequential(ember::nn::Linear(784, 256), ember::nn::ReLU(),
                                     ember::nn::Linear(256, 10));
  ember::optim::Adam opt(model->parameters());
  ember::Tensor x = ember::rand({64, 784}), y = ember::randint(0, 10, {64});
  for (auto _ : state) {
    ember::Tensor loss = ember::nn::F::cross_entropy(model(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}
BENCHMARK(BM_MlpStep)->Unit(benchmark::kMicrosecond);

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

void BM_AddInplace32M(benchmark::State& state) {
  ember::Tensor a = ember::rand({kLarge}), b = ember::rand({kLarge});
  for (auto _ : state) {
    a += b;
    benchmark::DoNotOptimize(a.raw_data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 3 * kLarge * int64_t{sizeof(float)});
}
BENCHMARK(BM_AddInplace32M)->Unit(benchmark::kMillisecond)->MinTime(0.5)->UseRealTime();

// Ten element-wise ops in a row at 32M floats: four binary (3 x 4 B per element), six unary
// (2 x 4 B).
void BM_Chain10_32M(benchmark::State& state) {
  ember::Tensor a = ember::rand({kLarge}), b = ember::rand({kLarge}) + 1;
  for (auto _ : state) {
    ember::Tensor y = chain10(a, b);
    benchmark::DoNotOptimize(y.raw_data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 96 * kLarge);
}
BENCHMARK(BM_Chain10_32M)->Unit(benchmark::kMillisecond)->MinTime(0.5)->UseRealTime();

// The limit of the memory-bound rows: memcpy of 32M floats over ember's threads, between
// buffers from ember's allocator; reads 1 and writes 1 float per element.
void BM_MemcpyLimit32M(benchmark::State& state) {
  ember::Tensor src = ember::ones({kLarge}), dst = ember::zeros({kLarge});
  for (auto _ : state) {
    ember_bench::parallel_memcpy(dst.raw_data_ptr(), src.raw_data_ptr(), kLarge * sizeof(float),
                                 ember::get_num_threads());
    benchmark::DoNotOptimize(dst.raw_data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 2 * kLarge * int64_t{sizeof(float)});
}
BENCHMARK(BM_MemcpyLimit32M)->Unit(benchmark::kMillisecond)->MinTime(0.5)->UseRealTime();

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

// bfloat16 a (m x k) @ b (k x n), float32 accumulation, one rounding: the AMX or AVX512-BF16
// kernel at those levels, else (and with widen = 1) operands widened to float32 while packed.
// b is a Linear weight (n x k, transposed) when weight = 1, as in the language models.
void bf16_gemm(benchmark::State& state, int64_t m, int64_t k, int64_t n, bool weight, bool widen) {
  ember::set_bf16_matmul_reduced_precision_reduction(!widen);
  ember::Tensor a = ember::randn({m, k}).to(ember::kBFloat16);
  ember::Tensor w =
      ember::randn(weight ? ember::Shape{n, k} : ember::Shape{k, n}).to(ember::kBFloat16);
  for (auto _ : state) {
    ember::Tensor c = weight ? ember::nn::functional::linear(a, w) : ember::mm(a, w);
    benchmark::DoNotOptimize(c.raw_data_ptr());
  }
  ember::set_bf16_matmul_reduced_precision_reduction(true);
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k),
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::OneK::kIs1000);
}

// Square, both operands row-major (args: n, widen).
void BM_Bf16Gemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  bf16_gemm(state, n, n, n, false, state.range(1) != 0);
}
BENCHMARK(BM_Bf16Gemm)
    ->ArgNames({"n", "widen"})
    ->Args({1024, 0})
    ->Args({1024, 1})
    ->Args({4096, 0})
    ->Args({4096, 1})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5)
    ->UseRealTime();

// Linear(k -> n) on m rows (args: m, k, n, widen): decode (m of 1 to 64) and the GPT's shapes.
void BM_Bf16Linear(benchmark::State& state) {
  bf16_gemm(state, state.range(0), state.range(1), state.range(2), true, state.range(3) != 0);
}
BENCHMARK(BM_Bf16Linear)
    ->ArgNames({"m", "k", "n", "widen"})
    ->ArgsProduct({{1, 16, 64}, {512, 4096}, {512, 4096}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.2)
    ->UseRealTime();

// The limit of the bfloat16 rows at the amx level: tile multiply-adds on ember's threads.
void BM_AmxPeakLimit(benchmark::State& state) {
  double seconds = 0, flops = 0;
  for (auto _ : state) {
    ember_bench::PeakRun run = ember_bench::measure_amx_peak(ember::get_num_threads());
    if (run.flops == 0) {
      state.SkipWithError("ember's level is not amx");
      return;
    }
    state.SetIterationTime(run.seconds);
    seconds += run.seconds;
    flops += run.flops;
    state.SetLabel(run.isa);
  }
  state.counters["FLOP/s"] = benchmark::Counter(flops / seconds);
}
BENCHMARK(BM_AmxPeakLimit)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);

// The limit of the sgemm rows: float32 FMA throughput with the widest vectors, on ember's threads.
void BM_FmaPeakLimit(benchmark::State& state) {
  double seconds = 0, flops = 0;
  for (auto _ : state) {
    ember_bench::PeakRun run = ember_bench::measure_fma_peak(ember::get_num_threads());
    state.SetIterationTime(run.seconds);
    seconds += run.seconds;
    flops += run.flops;
    state.SetLabel(run.isa);
  }
  state.counters["FLOP/s"] = benchmark::Counter(flops / seconds);
}
BENCHMARK(BM_FmaPeakLimit)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
