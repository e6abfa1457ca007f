// backend/cuda/pinned_cache.h: the bookkeeping of the pinned (page-locked) host memory cache, in
// plain C++ so that it is tested on any machine. Blocks come from a RawAllocator (cudaHostAlloc
// on a GPU machine, a fake in tests) in power-of-two sizes; a freed block is reused only once the
// asynchronous copies recorded on it have finished, and idle blocks beyond a byte limit (and all
// of them on empty_cache) go back to the raw allocator, so the cache cannot grow without bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "backend/cuda/caching_allocator.h"

namespace ember::cuda_alloc {

// Idle pinned bytes kept for reuse; beyond this, idle blocks are given back (oldest first).
inline constexpr size_t kMaxIdlePinnedBytes = size_t{1} << 30;

struct PinnedStats {
  size_t in_use = 0;      // bytes in blocks handed out
  size_t cached = 0;      // bytes in idle blocks kept for reuse
  size_t raw_allocs = 0;  // blocks obtained from the raw allocator
  size_t raw_frees = 0;   // blocks given back
};

class PinnedCache {
 public:
  explicit PinnedCache(RawAllocator& raw, size_t max_idle_bytes = kMaxIdlePinnedBytes);
  // Gives every block back (waiting for their copies); blocks still handed out included.
  ~PinnedCache();
  PinnedCache(const PinnedCache&) = delete;
  PinnedCache& operator=(const PinnedCache&) = delete;

  // A block of at least nbytes (nullptr for 0, or when the raw allocator fails even after the
  // idle blocks were given back).
  void* allocate(size_t nbytes);
  // Makes the block idle; it is reused, or given back, once its recorded copies are done.
  void free(void* ptr);
  // An asynchronous copy on `stream` reads or writes the block containing ptr; false when ptr is
  // in no block of this cache.
  bool record_use(const void* ptr, StreamId stream);
  bool contains(const void* ptr) const;
  // Gives back every idle block whose copies have finished.
  void empty_cache();
  PinnedStats stats() const;
  // The size a request is served with: a power of two, at least 512 bytes.
  static size_t round_size(size_t nbytes);

 private:
  struct Block {
    size_t size;
    bool in_use;
    uint64_t freed_at = 0;         // when it last became idle (a counter), for oldest-first trims
    std::vector<EventId> pending;  // copies that may still read or write it
  };
  using Blocks = std::map<uintptr_t, Block>;

  bool copies_done(Block& b);
  void release(Blocks::iterator it);
  // Gives back idle, finished blocks, oldest first, until at most `limit` idle bytes remain.
  void trim(size_t limit);
  Blocks::const_iterator find(const void* ptr) const;

  RawAllocator& raw_;
  size_t max_idle_;
  mutable std::mutex mutex_;
  Blocks blocks_;  // by base address
  PinnedStats stats_;
  uint64_t clock_ = 0;
};

}  // namespace ember::cuda_alloc
