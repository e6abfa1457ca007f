// cuda_runtime_api.h of the emulated CUDA device (tests/cuda_emu): the runtime calls.
#pragma once
#include "ember_cuda_emu/runtime.h"
