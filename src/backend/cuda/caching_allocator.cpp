// backend/cuda/caching_allocator.cpp: block pools, splitting and coalescing of the caching
// allocator (see caching_allocator.h).
#include "backend/cuda/caching_allocator.h"

#include <cstddef>
#include <cstdio>
#include <set>
#include <vector>

#include "ember/error.h"

namespace ember::cuda_alloc {

// A run of bytes inside one segment; prev / next link the neighbours in that segment.
struct CachingAllocator::Block {
  Block(char* ptr_, size_t size_, StreamId stream_, bool small_, PoolId pool_)
      : ptr(ptr_), size(size_), stream(stream_), small(small_), pool(pool_) {}
  char* ptr;
  size_t size;
  StreamId stream;
  bool small;
  PoolId pool;
  bool allocated = false;  // also while its free waits for events, so no neighbour merges it
  Block* prev = nullptr;
  Block* next = nullptr;
  std::vector<StreamId> stream_uses;  // other streams recorded on it (record_stream)
  int events = 0;                     // events its free still waits for
};

bool CachingAllocator::BlockLess::operator()(const Block* a, const Block* b) const {
  if (a->pool != b->pool) return a->pool < b->pool;
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

std::string format_bytes(size_t nbytes) {
  char buf[64];
  double v = static_cast<double>(nbytes);
  if (nbytes < 1024)
    std::snprintf(buf, sizeof buf, "%zu bytes", nbytes);
  else if (nbytes < (size_t{1} << 20))
    std::snprintf(buf, sizeof buf, "%.2f KiB", v / 1024.0);
  else if (nbytes < (size_t{1} << 30))
    std::snprintf(buf, sizeof buf, "%.2f MiB", v / 1048576.0);
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / 1073741824.0);
  return buf;
}

CachingAllocator::CachingAllocator(RawAllocator& raw, bool caching)
    : raw_(raw), caching_(caching) {}

CachingAllocator::~CachingAllocator() {
  std::vector<Block*> held;
  for (const PendingEvent& p : pending_) {
    raw_.release_event(p.event);
    if (--p.block->events == 0) held.push_back(p.block);
  }
  for (Block* b : held) delete b;
  release_free_segments();
  for (Pool* pool : {&small_pool_, &large_pool_})
    for (Block* b : *pool) delete b;
  for (auto& [ptr, b] : in_use_) delete b;
}

size_t CachingAllocator::round_size(size_t nbytes) {
  if (nbytes < kMinBlockSize) return kMinBlockSize;
  return (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t CachingAllocator::segment_size(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return (rounded + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

CachingAllocator::Block* CachingAllocator::find_free(Pool& pool, size_t size, StreamId stream,
                                                     PoolId pool_id) {
  Block key(nullptr, size, stream, false, pool_id);
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream || (*it)->pool != pool_id) return nullptr;
  Block* b = *it;
  pool.erase(it);
  return b;
}

CachingAllocator::Block* CachingAllocator::new_segment(size_t size, StreamId stream, bool small,
                                                       PoolId pool_id) {
  void* p = raw_.malloc(size);
  if (!p) return nullptr;
  ++stats_.raw_mallocs;
  stats_.reserved += size;
  return new Block(static_cast<char*>(p), size, stream, small, pool_id);
}

void* CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  auto capture = capturing_.find(stream);
  PoolId pool_id = capture == capturing_.end() ? 0 : capture->second;
  // Events are neither polled nor waited for while this stream is captured (CUDA forbids it).
  if (!pending_.empty() && !pool_id) process_events(false);
  size_t size = round_size(nbytes);
  bool small = size <= kSmallSize;
  Block* b = nullptr;
  if (!caching_) {
    b = new_segment(size, stream, small, 0);
  } else {
    Pool& pool = small ? small_pool_ : large_pool_;
    b = find_free(pool, size, stream, pool_id);
    if (!b) {
      size_t seg = segment_size(size);
      b = new_segment(seg, stream, small, pool_id);
      if (!b) {  // out of memory: give back what is cached and try once more
        if (!pool_id) process_events(true);
        release_free_segments();
        b = new_segment(seg, stream, small, pool_id);
      }
    }
    if (b) {
      size_t remaining = b->size - size;
      if (small ? remaining >= kMinBlockSize : remaining > kSmallSize) {
        auto* rest = new Block(b->ptr + size, remaining, b->stream, small, b->pool);
        rest->prev = b;
        rest->next = b->next;
        if (b->next) b->next->prev = rest;
        b->next = rest;
        b->size = size;
        pool.insert(rest);
      }
    }
  }
  if (!b) return nullptr;
  b->allocated = true;
  in_use_.emplace(b->ptr, b);
  stats_.allocated += b->size;
  if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
  return b->ptr;
}

void CachingAllocator::free(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_use_.find(ptr);
  EMBER_CHECK_KIND(Value, it != in_use_.end(),
                   "[cuda allocator] free of a pointer this allocator did not hand out (or "
                   "freed twice)");
  Block* b = it->second;
  in_use_.erase(it);
  stats_.allocated -= b->size;
  if (!caching_) {
    raw_.free(b->ptr);
    ++stats_.raw_frees;
    stats_.reserved -= b->size;
    delete b;
    return;
  }
  if (!b->stream_uses.empty() && !b->pool) {
    // Other streams may still use the block: reuse it only once their work so far is done.
    std::vector<EventId> events;
    for (StreamId s : b->stream_uses) events.push_back(raw_.record_event(s));
    b->stream_uses.clear();
    for (EventId e : events) pending_.push_back({e, b});
    b->events = static_cast<int>(events.size());
    return;
  }
  free_block(b);
}

void CachingAllocator::free_block(Block* b) {
  b->allocated = false;
  Pool& pool = b->small ? small_pool_ : large_pool_;
  if (Block* prev = b->prev; prev && !prev->allocated) {
    pool.erase(prev);
    prev->size += b->size;
    prev->next = b->next;
    if (b->next) b->next->prev = prev;
    delete b;
    b = prev;
  }
  if (Block* next = b->next; next && !next->allocated) {
    pool.erase(next);
    b->size += next->size;
    b->next = next->next;
    if (next->next) next->next->prev = b;
    delete next;
  }
  b->stream_uses.clear();  // a capture pool's blocks are replayed in capture order
  if (!(b->pool && release_if_whole(pool, b))) pool.insert(b);
}

bool CachingAllocator::release_if_whole(Pool& pool, Block* b) {
  if (b->prev || b->next || b->allocated || live_pools_.count(b->pool)) return false;
  pool.erase(b);
  raw_.free(b->ptr);
  ++stats_.raw_frees;
  stats_.reserved -= b->size;
  delete b;
  return true;
}

void CachingAllocator::process_events(bool wait) {
  if (wait)
    for (const PendingEvent& p : pending_) raw_.synchronize_event(p.event);
  std::vector<PendingEvent> still;
  size_t i = 0;
  try {
    for (; i < pending_.size(); ++i) {
      PendingEvent p = pending_[i];
      if (!wait && !raw_.event_done(p.event)) {
        still.push_back(p);
        continue;
      }
      raw_.release_event(p.event);
      if (--p.block->events == 0) free_block(p.block);
    }
  } catch (...) {  // keep what was not processed, so no block is freed twice
    still.insert(still.end(), pending_.begin() + static_cast<std::ptrdiff_t>(i), pending_.end());
    pending_.swap(still);
    throw;
  }
  pending_.swap(still);
}

void CachingAllocator::record_stream(void* ptr, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_use_.find(ptr);
  if (it == in_use_.end()) return;
  Block* b = it->second;
  if (stream == b->stream) return;
  for (StreamId s : b->stream_uses)
    if (s == stream) return;
  b->stream_uses.push_back(stream);
}

size_t CachingAllocator::pending_frees() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::set<const Block*> blocks;
  for (const PendingEvent& p : pending_) blocks.insert(p.block);
  return blocks.size();
}

void CachingAllocator::release_free_segments() {
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    std::vector<Block*> whole;
    for (Block* b : *pool)
      if (!b->prev && !b->next) whole.push_back(b);
    for (Block* b : whole) release_if_whole(*pool, b);
  }
}

PoolId CachingAllocator::begin_capture(StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  EMBER_CHECK_KIND(Value, !capturing_.count(stream),
                   "[cuda allocator] the stream is already being captured");
  PoolId id = next_pool_++;
  capturing_.emplace(stream, id);
  live_pools_.insert(id);
  return id;
}

void CachingAllocator::end_capture(StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  capturing_.erase(stream);
}

void CachingAllocator::release_pool(PoolId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!live_pools_.erase(id)) return;
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    std::vector<Block*> mine;
    for (Block* b : *pool)
      if (b->pool == id) mine.push_back(b);
    for (Block* b : mine) release_if_whole(*pool, b);
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events(true);
  release_free_segments();
}

Stats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated = stats_.allocated;
}

}  // namespace ember::cuda_alloc
