// backend/cuda/caching_allocator.h: the bookkeeping of the CUDA caching allocator, in plain C++
// so that it is tested on any machine. It carves blocks out of segments obtained from a
// RawAllocator (cudaMalloc on a GPU, a fake in tests), keeps freed blocks in pools per stream, and
// gives segments back only on empty_cache() or when the raw allocator runs out of memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace ember::cuda_alloc {

// Where segments come from. malloc returns nullptr when out of memory.
class RawAllocator {
 public:
  virtual ~RawAllocator() = default;
  virtual void* malloc(size_t nbytes) = 0;
  virtual void free(void* ptr) = 0;
};

// A stream as the allocator sees it: an opaque handle (cudaStream_t on a GPU).
using StreamId = uintptr_t;

inline constexpr size_t kMinBlockSize = 512;        // every size is rounded up to this
inline constexpr size_t kSmallSize = 1 << 20;       // requests up to 1 MiB use the small pool
inline constexpr size_t kSmallBuffer = 2 << 20;     // small pool segments are 2 MiB
inline constexpr size_t kMinLargeAlloc = 10 << 20;  // large requests below this get ...
inline constexpr size_t kLargeBuffer = 20 << 20;    // ... a 20 MiB segment
inline constexpr size_t kRoundLarge = 2 << 20;      // larger ones are rounded up to 2 MiB

// Sizes as PyTorch prints them: "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB".
std::string format_bytes(size_t nbytes);

struct Stats {
  size_t allocated = 0;       // bytes in blocks handed out (rounded sizes)
  size_t reserved = 0;        // bytes in segments held from the raw allocator
  size_t peak_allocated = 0;  // maximum of `allocated` since the last reset
  size_t raw_mallocs = 0;     // segments obtained from the raw allocator
  size_t raw_frees = 0;       // segments given back
};

class CachingAllocator {
 public:
  // caching = false passes every request straight to the raw allocator (for memcheck runs).
  explicit CachingAllocator(RawAllocator& raw, bool caching = true);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least nbytes for use on `stream`; nullptr when the raw allocator fails even
  // after the cache was emptied. nbytes == 0 gives nullptr.
  void* allocate(size_t nbytes, StreamId stream);
  // Returns a block to the pool of the stream it was allocated on.
  void free(void* ptr);
  // Gives every cached segment with no block in use back to the raw allocator.
  void empty_cache();

  Stats stats() const;
  void reset_peak();
  bool caching() const { return caching_; }
  // The size a request is served with.
  static size_t round_size(size_t nbytes);
  // The size of the segment a request of `rounded` bytes allocates.
  static size_t segment_size(size_t rounded);

 private:
  struct Block;
  struct BlockLess {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BlockLess>;

  Block* find_free(Pool& pool, size_t size, StreamId stream);
  Block* new_segment(size_t size, StreamId stream, bool small);
  void release_free_segments();

  RawAllocator& raw_;
  bool caching_;
  mutable std::mutex mutex_;
  Pool small_pool_, large_pool_;
  std::unordered_map<void*, Block*> in_use_;
  Stats stats_;
};

}  // namespace ember::cuda_alloc
