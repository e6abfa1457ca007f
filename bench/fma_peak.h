// bench/fma_peak.h: the machine's measured float32 multiply-add peak, the limit sgemm is
// compared against.
#pragma once

namespace ember_bench {

// Seconds for `flops` float32 FLOPs of independent fused multiply-adds on `threads` threads,
// with the vectors of the level ember's kernels run at (get_cpu_capability: AVX-512, AVX2 + FMA,
// or the baseline's SSE2 multiply and add). Returns {seconds, flops}.
struct PeakRun {
  double seconds = 0, flops = 0;
  const char* isa = "";
};
PeakRun measure_fma_peak(int threads);

}  // namespace ember_bench
