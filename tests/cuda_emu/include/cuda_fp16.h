// cuda_fp16.h of the emulated CUDA device (tests/cuda_emu): __half.
#pragma once
#include "ember_cuda_emu/half_types.h"
