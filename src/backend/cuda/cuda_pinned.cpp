// backend/cuda/cuda_pinned.cpp: the pinned host memory cache over cudaHostAlloc (bookkeeping in
// pinned_cache.cpp). A freed block is reused only once every asynchronous copy recorded on it
// (record_pinned_use) has finished, so freeing a pinned tensor right after a non_blocking copy
// from it is safe; idle blocks beyond 1 GiB, and all idle blocks on cuda::empty_cache(), are
// given back with cudaFreeHost.
#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_raw.h"
#include "backend/cuda/pinned_cache.h"
#include "core/pinned_memory.h"
#include "ember/error.h"

namespace ember {

namespace {

class CudaHostRaw : public cuda_detail::CudaEventsRaw {
 public:
  void* malloc(size_t nbytes) override {
    void* p = nullptr;
    cudaError_t err = cudaHostAlloc(&p, nbytes, cudaHostAllocDefault);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    EMBER_CUDA_CHECK(err, "pin_memory (cudaHostAlloc)");
    return p;
  }
  void free(void* ptr) override { EMBER_CUDA_CHECK(cudaFreeHost(ptr), "cudaFreeHost"); }
};

// Never destroyed (the runtime may be gone at exit).
cuda_alloc::PinnedCache& cache() {
  static auto* raw = new CudaHostRaw();
  static auto* c = new cuda_alloc::PinnedCache(*raw);
  return *c;
}

}  // namespace

bool pinned_memory_available() {
  return cuda_detail::real_device_count() > 0;
}

void* pinned_allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  EMBER_CHECK_KIND(Device, cuda_detail::real_device_count() > 0,
                   "[pin_memory] pinned memory needs a CUDA device, and no NVIDIA driver or GPU "
                   "was found. Leave pin_memory off on machines without a GPU.");
  void* p = cache().allocate(nbytes);
  EMBER_CHECK_KIND(OutOfMemory, p != nullptr, "[pin_memory] cudaHostAlloc could not allocate ",
                   cuda_alloc::format_bytes(cuda_alloc::PinnedCache::round_size(nbytes)),
                   " of pinned host memory; pin smaller tensors or fewer at a time");
  return p;
}

void pinned_free(void* ptr) {
  if (ptr) cache().free(ptr);
}

bool is_pinned_pointer(const void* ptr) {
  if (!ptr || cuda_detail::real_device_count() == 0) return false;
  return cache().contains(ptr);
}

void pinned_empty_cache() {
  if (cuda_detail::real_device_count() > 0) cache().empty_cache();
}

namespace cuda_detail {

// Called with the stream's device current (the copy's DeviceGuard).
void record_pinned_use(const void* host_ptr, cudaStream_t stream) {
  cache().record_use(host_ptr, reinterpret_cast<cuda_alloc::StreamId>(stream));
}

}  // namespace cuda_detail

}  // namespace ember
