// cuda_bf16.h of the emulated CUDA device (tests/cuda_emu): __nv_bfloat16.
#pragma once
#include "ember_cuda_emu/half_types.h"
