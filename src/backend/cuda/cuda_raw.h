// backend/cuda/cuda_raw.h: the CUDA side of the allocators' RawAllocator interface -- events as
// cudaEvent_t (recorded with the stream's device current) -- shared by the device caching
// allocator (cuda_memory.cpp) and the pinned host cache (cuda_pinned.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include "backend/cuda/caching_allocator.h"

namespace ember::cuda_detail {

// The answer of cudaEventQuery / cudaStreamQuery: true when done, false for cudaErrorNotReady
// (cleared), an Error naming `op` for anything else.
bool query_done(cudaError_t err, const char* op);

class CudaEventsRaw : public cuda_alloc::RawAllocator {
 public:
  cuda_alloc::EventId record_event(cuda_alloc::StreamId stream) override;
  bool event_done(cuda_alloc::EventId event) override;
  void synchronize_event(cuda_alloc::EventId event) override;
  void release_event(cuda_alloc::EventId event) override;
};

}  // namespace ember::cuda_detail
