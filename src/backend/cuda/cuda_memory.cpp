// backend/cuda/cuda_memory.cpp: one caching allocator per GPU over cudaMalloc, the out-of-memory
// message, and the memory statistics of ember/cuda.h. EMBER_CUDA_NO_CACHING=1 turns caching off
// (every tensor is its own cudaMalloc, as compute-sanitizer wants).
#include <cuda_runtime_api.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/cuda_capture.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_raw.h"
#include "core/pinned_memory.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember {

namespace cuda_detail {

// Events are created on the current device: callers make the stream's device current.
cuda_alloc::EventId CudaEventsRaw::record_event(cuda_alloc::StreamId stream) {
  cudaEvent_t e = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                   "allocator event (cudaEventCreate)");
  cudaError_t err = cudaEventRecord(e, reinterpret_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) cudaEventDestroy(e);
  EMBER_CUDA_CHECK(err, "allocator event (cudaEventRecord)");
  return reinterpret_cast<cuda_alloc::EventId>(e);
}

bool CudaEventsRaw::event_done(cuda_alloc::EventId event) {
  return query_done(cudaEventQuery(reinterpret_cast<cudaEvent_t>(event)),
                    "allocator event (cudaEventQuery)");
}

void CudaEventsRaw::synchronize_event(cuda_alloc::EventId event) {
  EMBER_CUDA_CHECK(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(event)),
                   "allocator event (cudaEventSynchronize)");
}

void CudaEventsRaw::release_event(cuda_alloc::EventId event) {
  cudaEventDestroy(reinterpret_cast<cudaEvent_t>(event));
}

namespace {

constexpr int kMaxDevices = 64;

// cudaMalloc on the current device; nullptr when the device is out of memory.
class CudaRawAllocator : public CudaEventsRaw {
 public:
  void* malloc(size_t nbytes) override {
    void* p = nullptr;
    // cudaMalloc is not stream-ordered, so it may run while a graph is captured; relaxed mode
    // says so to CUDA, which otherwise invalidates the capture (PyTorch does the same).
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    cudaError_t err = cudaMalloc(&p, nbytes);
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    EMBER_CUDA_CHECK(err, "cudaMalloc");
    return p;
  }
  void free(void* ptr) override { EMBER_CUDA_CHECK(cudaFree(ptr), "cudaFree"); }
};

bool caching_enabled() {
  const char* v = std::getenv("EMBER_CUDA_NO_CACHING");
  return !(v && std::strcmp(v, "0") != 0 && *v);
}

// Created on first use and never destroyed: freeing device memory while the CUDA runtime shuts
// down at exit fails, so the cache is left to the driver then.
cuda_alloc::CachingAllocator& allocator(int device) {
  static CudaRawAllocator raw;
  static std::array<cuda_alloc::CachingAllocator*, kMaxDevices> allocators{};
  static std::mutex mutex;
  EMBER_CHECK_KIND(Device, device >= 0 && device < kMaxDevices, "[cuda allocator] device index ",
                   device, " out of range");
  std::lock_guard<std::mutex> lock(mutex);
  if (!allocators[device])
    allocators[device] = new cuda_alloc::CachingAllocator(raw, caching_enabled());
  return *allocators[device];
}

int resolve(int index) {
  return index < 0 ? current_device() : index;
}

}  // namespace

void* device_allocate(size_t nbytes, int device) {
  if (nbytes == 0) return nullptr;
  cuda::DeviceGuard guard(device);
  cuda_alloc::CachingAllocator& a = allocator(device);
  void* p = a.allocate(nbytes, reinterpret_cast<cuda_alloc::StreamId>(current_stream(device)));
  if (p) return p;
  size_t free_bytes = 0, total = 0;
  cudaMemGetInfo(&free_bytes, &total);
  cudaGetLastError();
  cuda_alloc::Stats s = a.stats();
  EMBER_THROW(OutOfMemory, "CUDA out of memory. Tried to allocate ",
              cuda_alloc::format_bytes(nbytes), " (GPU ", device, "; ",
              cuda_alloc::format_bytes(total), " total capacity; ",
              cuda_alloc::format_bytes(s.allocated), " already allocated; ",
              cuda_alloc::format_bytes(free_bytes), " free; ", cuda_alloc::format_bytes(s.reserved),
              " reserved in total by ember). Free tensors you no longer need, lower the batch "
              "size, or call cuda::empty_cache() if reserved memory is much larger than "
              "allocated memory.");
}

void device_free(void* ptr, int device) {
  if (!ptr) return;
  cuda::DeviceGuard guard(device);
  allocator(device).free(ptr);
}

void device_record_stream(void* ptr, int device, cudaStream_t stream) {
  if (!ptr) return;
  allocator(device).record_stream(ptr, reinterpret_cast<cuda_alloc::StreamId>(stream));
}

bool allocator_caches(int device) {
  return allocator(device).caching();
}

uint64_t begin_capture_pool(int device, cudaStream_t stream) {
  return allocator(device).begin_capture(reinterpret_cast<cuda_alloc::StreamId>(stream));
}

void end_capture_pool(int device, cudaStream_t stream) {
  allocator(device).end_capture(reinterpret_cast<cuda_alloc::StreamId>(stream));
}

void release_capture_pool(int device, uint64_t pool) {
  allocator(device).release_pool(pool);
}

Scratch::Scratch(size_t nbytes) : device_(current_device()) {
  ptr_ = device_allocate(nbytes, device_);
}

Scratch::~Scratch() {
  try {
    device_free(ptr_, device_);
  } catch (...) {  // a destructor must not throw; the block stays reserved
  }
}

}  // namespace cuda_detail

namespace cuda {

void empty_cache() {
  int n = cuda_detail::real_device_count();
  for (int d = 0; d < n; ++d) {
    DeviceGuard guard(d);
    cuda_detail::allocator(d).empty_cache();
  }
  pinned_empty_cache();
}

size_t memory_allocated(int index) {
  if (cuda_detail::real_device_count() == 0) return 0;
  return cuda_detail::allocator(cuda_detail::resolve(index)).stats().allocated;
}

size_t memory_reserved(int index) {
  if (cuda_detail::real_device_count() == 0) return 0;
  return cuda_detail::allocator(cuda_detail::resolve(index)).stats().reserved;
}

size_t max_memory_allocated(int index) {
  if (cuda_detail::real_device_count() == 0) return 0;
  return cuda_detail::allocator(cuda_detail::resolve(index)).stats().peak_allocated;
}

void reset_peak_memory_stats(int index) {
  if (cuda_detail::real_device_count() == 0) return;
  cuda_detail::allocator(cuda_detail::resolve(index)).reset_peak();
}

}  // namespace cuda

}  // namespace ember
