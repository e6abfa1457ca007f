// kernels/host_device.h: EMBER_HOST_DEVICE marks a function of the kernel-common code for both
// the host and, under nvcc, the device.
#pragma once

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif
