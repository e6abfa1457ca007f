// cub/device/device_radix_sort.cuh of the emulated CUDA device (tests/cuda_emu): the key-value
// sorts ember uses (ember_cuda_emu/cub.h).
#pragma once
#include "ember_cuda_emu/cub.h"
