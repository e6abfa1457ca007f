// bench/amx_peak.h: the machine's measured bfloat16 matrix-unit peak (AMX _tile_dpbf16ps), the
// limit the AMX bfloat16 GEMM is compared against.
#pragma once

#include "fma_peak.h"

namespace ember_bench {

// Seconds for independent 16 x 16 x 32 tile multiply-adds (four accumulator tiles, operands in
// registers, no memory traffic) on `threads` threads at once; flops 0 when ember's level is not
// amx (no AMX, or EMBER_CPU_ISA caps it).
PeakRun measure_amx_peak(int threads);

}  // namespace ember_bench
