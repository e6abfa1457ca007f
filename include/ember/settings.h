// ember/settings.h: process-wide controls of how kernels run -- CPU threads, the CPU's
// instruction-set level, flushing denormals, and the float32 and bfloat16 matmul precision.
#pragma once

#include <string>

namespace ember {

// Threads used by CPU kernels.
void set_num_threads(int n);
int get_num_threads();
// The x86 instruction-set level the CPU kernels run at (torch.backends.cpu.get_cpu_capability):
// "amx" (AMX-BF16 tiles), "avx512_bf16", "avx512", "avx2" (AVX2 + FMA) or "baseline" -- the best
// this CPU supports, capped by the environment variable
// EMBER_CPU_ISA=amx|avx512_bf16|avx512|avx2|baseline, read once. Any other value of EMBER_CPU_ISA
// makes the first CPU op throw an Error that names it.
std::string get_cpu_capability();
// Gives the host memory that ember's allocator keeps for reuse (the blocks of freed CPU tensors:
// larger ones up to an eighth of RAM, and the calling thread's small ones) back to the system --
// for example after loading a model, whose temporaries would otherwise stay resident. The CUDA
// counterpart is cuda::empty_cache().
void empty_host_cache();
// torch.set_flush_denormal: treat subnormal floats as zero on the CPU (much faster where values
// decay towards zero, e.g. Adam's moments of unused weights). Returns false where unsupported.
bool set_flush_denormal(bool on);

// torch.set_float32_matmul_precision: "highest" (the default) computes float32 matrix products
// in full float32; "high" and "medium" let CUDA use TensorFloat-32 tensor cores (inputs rounded
// to a 10-bit mantissa, float32 accumulation), for matmul, bmm, linear and convolution alike.
// CPU products are unaffected. Any other value throws an Error.
void set_float32_matmul_precision(const std::string& precision);
std::string get_float32_matmul_precision();

// torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction, for the CPU: true (the
// default) runs bfloat16 matrix products on the CPU's bfloat16 dot-product instructions where the
// level has them ("amx", "avx512_bf16"), which add the products of k in pairs and read and write
// subnormals as zero (float32 accumulation, one rounding at the end); false widens the operands
// to float32 and adds one product at a time, as at "avx512" (results differ in the last bits).
void set_bf16_matmul_reduced_precision_reduction(bool allow);
bool get_bf16_matmul_reduced_precision_reduction();

}  // namespace ember
