// backend/cuda/cuda_launch.cuh: how the kernels are launched and take dynamic shared memory, the
// same under nvcc and on the emulated CUDA device the tests run the kernel sources on
// (tests/cuda_emu, built with EMBER_CUDA_EMULATED).
//
//   EMBER_CUDA_LAUNCH(grid, block, shared_bytes, stream, kernel<Args...>)(arguments...);
//   EMBER_CUDA_DYNAMIC_SHARED(unsigned char, smem);  // in a kernel: its dynamic shared memory
#pragma once

#if defined(EMBER_CUDA_EMULATED)
#include <cuda_runtime.h>
// The kernel's name may leave template arguments to be deduced from the call, so it is called
// from a generic lambda; its address (the key of cudaFuncSetAttribute) is taken where it names one
// function.
#define EMBER_CUDA_LAUNCH(grid, block, shared_bytes, stream, ...)                           \
  ::ember_cuda_emu::Launch(                                                                 \
      ::ember_cuda_emu::LaunchSite((grid), (block), (shared_bytes), (stream), #__VA_ARGS__, \
                                   __FILE__, __LINE__),                                     \
      [](auto&... a) { __VA_ARGS__(a...); },                                                \
      [] {                                                                                  \
        if constexpr (requires { &__VA_ARGS__; })                                           \
          return reinterpret_cast<const void*>(&__VA_ARGS__);                               \
        else                                                                                \
          return static_cast<const void*>(nullptr);                                         \
      }())
#define EMBER_CUDA_DYNAMIC_SHARED(type, name) \
  type* name = reinterpret_cast<type*>(::ember_cuda_emu::dynamic_shared())
#else
#define EMBER_CUDA_LAUNCH(grid, block, shared_bytes, stream, ...) \
  __VA_ARGS__<<<(grid), (block), (shared_bytes), (stream)>>>
#define EMBER_CUDA_DYNAMIC_SHARED(type, name) extern __shared__ __align__(128) type name[]
#endif
