// backend/cuda/cuda_pinned.cpp: the pinned host memory cache. Blocks come from cudaHostAlloc in
// power-of-two sizes and are reused after they are freed -- but only once every asynchronous copy
// recorded on them (record_pinned_use) has finished, so freeing a pinned tensor right after a
// non_blocking copy from it is safe.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "backend/cuda/cuda_check.h"
#include "core/pinned_memory.h"
#include "ember/error.h"

namespace ember {

namespace {

struct PinnedBlock {
  size_t size;
  bool in_use;
  std::vector<cudaEvent_t> pending;  // copies still reading or writing the block
};

std::mutex& pinned_mutex() {
  static std::mutex m;
  return m;
}
// By base address; never destroyed (the runtime may be gone at exit).
std::map<uintptr_t, PinnedBlock>& pinned_blocks() {
  static auto* blocks = new std::map<uintptr_t, PinnedBlock>();
  return *blocks;
}

// Whether every copy recorded on b has finished (then forgets them).
bool copies_done(PinnedBlock& b) {
  for (cudaEvent_t e : b.pending) {
    cudaError_t err = cudaEventQuery(e);
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    EMBER_CUDA_CHECK(err, "pinned memory (cudaEventQuery)");
  }
  for (cudaEvent_t e : b.pending) cudaEventDestroy(e);
  b.pending.clear();
  return true;
}

size_t pinned_size(size_t nbytes) {
  size_t size = 512;
  while (size < nbytes) size <<= 1;
  return size;
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
  size_t size = pinned_size(nbytes);
  std::lock_guard<std::mutex> lock(pinned_mutex());
  auto& blocks = pinned_blocks();
  for (auto& [base, b] : blocks) {
    if (!b.in_use && b.size == size && copies_done(b)) {
      b.in_use = true;
      return reinterpret_cast<void*>(base);
    }
  }
  void* p = nullptr;
  cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocDefault);
  if (err == cudaErrorMemoryAllocation) {  // give back idle cached blocks and retry once
    cudaGetLastError();
    for (auto it = blocks.begin(); it != blocks.end();) {
      if (!it->second.in_use && copies_done(it->second)) {
        cudaFreeHost(reinterpret_cast<void*>(it->first));
        it = blocks.erase(it);
      } else {
        ++it;
      }
    }
    err = cudaHostAlloc(&p, size, cudaHostAllocDefault);
  }
  EMBER_CUDA_CHECK(err, "pin_memory (cudaHostAlloc)");
  blocks.emplace(reinterpret_cast<uintptr_t>(p), PinnedBlock{size, true, {}});
  return p;
}

void pinned_free(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(pinned_mutex());
  auto it = pinned_blocks().find(reinterpret_cast<uintptr_t>(ptr));
  if (it != pinned_blocks().end()) it->second.in_use = false;
}

namespace {
// The block containing ptr, or null. Callers hold the mutex.
PinnedBlock* block_containing(const void* ptr) {
  auto& blocks = pinned_blocks();
  auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks.upper_bound(p);
  if (it == blocks.begin()) return nullptr;
  --it;
  return p < it->first + it->second.size ? &it->second : nullptr;
}
}  // namespace

bool is_pinned_pointer(const void* ptr) {
  if (!ptr) return false;
  std::lock_guard<std::mutex> lock(pinned_mutex());
  return block_containing(ptr) != nullptr;
}

namespace cuda_detail {

void record_pinned_use(const void* host_ptr, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(pinned_mutex());
  PinnedBlock* b = block_containing(host_ptr);
  if (!b) return;
  cudaEvent_t e = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "pinned memory event");
  cudaError_t err = cudaEventRecord(e, stream);
  if (err != cudaSuccess) cudaEventDestroy(e);
  EMBER_CUDA_CHECK(err, "pinned memory event");
  b->pending.push_back(e);
}

}  // namespace cuda_detail

}  // namespace ember
