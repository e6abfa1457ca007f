// backend/cuda/cuda_capture.h: what cuda::Graph (cuda_graph.cpp) needs from the rest of the CUDA
// backend -- the caching allocator's private capture pools (cuda_memory.cpp) and cuBLAS set up
// for the capturing stream before the capture starts (cuda_matmul.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ember::cuda_detail {

// Whether the allocator of `device` caches (EMBER_CUDA_NO_CACHING unset).
bool allocator_caches(int device);
// Allocations on `stream` of `device` come from a new private pool until end_capture_pool.
uint64_t begin_capture_pool(int device, cudaStream_t stream);
void end_capture_pool(int device, cudaStream_t stream);
void release_capture_pool(int device, uint64_t pool);
// Creates this thread's cuBLAS handle for `device` and its workspace for `stream`, so that no
// cuBLAS setup (and no cudaMalloc) happens inside a capture.
void prepare_blas(int device, cudaStream_t stream);

}  // namespace ember::cuda_detail
