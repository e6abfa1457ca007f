// backend/cpu/cpu_half_convert.h: contiguous float32 <-> float16 / bfloat16 conversion spans for
// the CPU's copies (to(dtype), autocast's casts), bit-exact with ember/half.h's scalar rules at
// every instruction-set level: F16C for float16 at the AVX2 and AVX-512 levels, branch-free code
// the compiler vectorizes for bfloat16.
#pragma once

#include <cstdint>

#include "ember/half.h"

namespace ember::cpu {

void convert(Half* dst, const float* src, int64_t n);
void convert(float* dst, const Half* src, int64_t n);
void convert(BFloat16* dst, const float* src, int64_t n);
void convert(float* dst, const BFloat16* src, int64_t n);

}  // namespace ember::cpu
