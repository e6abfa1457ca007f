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
#include <vector>

namespace ember::cuda_alloc {

// A stream as the allocator sees it: an opaque handle (cudaStream_t on a GPU).
using StreamId = uintptr_t;
// A marker recorded in a stream's work (a cudaEvent_t on a GPU).
using EventId = uintptr_t;
// A private pool of a CUDA graph capture (0: the ordinary per-stream pools).
using PoolId = uint64_t;

// Where segments come from, and the events that tell when a stream's work has finished (used for
// blocks that other streams still used when they were freed; see record_stream). malloc returns
// nullptr when out of memory.
class RawAllocator {
 public:
  virtual ~RawAllocator() = default;
  virtual void* malloc(size_t nbytes) = 0;
  virtual void free(void* ptr) = 0;
  // An event that completes once the work queued on `stream` so far has finished.
  virtual EventId record_event(StreamId stream) = 0;
  // Whether it has completed (never blocks).
  virtual bool event_done(EventId event) = 0;
  // Waits until it has completed.
  virtual void synchronize_event(EventId event) = 0;
  virtual void release_event(EventId event) = 0;
};

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
  // Returns a block to the pool of the stream it was allocated on -- at once, or, when other
  // streams were recorded on it, once events recorded on those streams now have completed.
  void free(void* ptr);
  // torch's record_stream: work queued on `stream` uses the block at ptr (a pointer this
  // allocator handed out; others are ignored, as PyTorch ignores memory it does not own).
  void record_stream(void* ptr, StreamId stream);
  // Waits for the events of blocks freed while other streams used them, then gives every cached
  // segment with no block in use back to the raw allocator.
  void empty_cache();
  // Blocks freed but held back until other streams' work on them finishes.
  size_t pending_frees() const;

  // CUDA graph capture: until end_capture(stream), allocations on `stream` come from a new
  // private pool, and blocks of that pool freed meanwhile are reused only by that capture. Its
  // segments are never given back while the graph may replay (its kernels keep the addresses);
  // release_pool retires it, and its segments go back once no block in them is in use.
  PoolId begin_capture(StreamId stream);
  void end_capture(StreamId stream);
  void release_pool(PoolId pool);

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

  Block* find_free(Pool& pool, size_t size, StreamId stream, PoolId pool_id);
  Block* new_segment(size_t size, StreamId stream, bool small, PoolId pool_id);
  // Gives back every whole free segment, except those of live capture pools.
  void release_free_segments();
  // Gives back b's segment if b is all of it, free, and not in a live capture pool.
  bool release_if_whole(Pool& pool, Block* b);
  // Returns b to its pool, merged with free neighbours.
  void free_block(Block* b);
  // Frees the held-back blocks whose events have completed (all of them, waiting, if `wait`).
  void process_events(bool wait);

  struct PendingEvent {
    EventId event;
    Block* block;
  };

  RawAllocator& raw_;
  bool caching_;
  mutable std::mutex mutex_;
  Pool small_pool_, large_pool_;
  std::unordered_map<void*, Block*> in_use_;
  std::vector<PendingEvent> pending_;
  std::unordered_map<StreamId, PoolId> capturing_;  // streams being captured, and their pools
  std::set<PoolId> live_pools_;                     // pools of graphs not yet released
  PoolId next_pool_ = 1;
  Stats stats_;
};

}  // namespace ember::cuda_alloc
