// cuda_runtime.h of the emulated CUDA device (tests/cuda_emu): the runtime calls and the
// execution model kernel sources compile against.
#pragma once
#include "ember_cuda_emu/device.h"
#include "ember_cuda_emu/runtime.h"
