// cub/device/device_segmented_radix_sort.cuh of the emulated CUDA device (tests/cuda_emu): the
// segmented key-value sorts ember uses (ember_cuda_emu/cub.h).
#pragma once
#include "ember_cuda_emu/cub.h"
