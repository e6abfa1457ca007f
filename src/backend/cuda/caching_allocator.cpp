// backend/cuda/caching_allocator.cpp: block pools, splitting and coalescing of the caching
// allocator (see caching_allocator.h).
#include "backend/cuda/caching_allocator.h"

#include <cstdio>
#include <vector>

#include "ember/error.h"

namespace ember::cuda_alloc {

// A run of bytes inside one segment; prev / next link the neighbours in that segment.
struct CachingAllocator::Block {
  char* ptr;
  size_t size;
  StreamId stream;
  bool small;
  bool allocated = false;
  Block* prev = nullptr;
  Block* next = nullptr;
};

bool CachingAllocator::BlockLess::operator()(const Block* a, const Block* b) const {
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

CachingAllocator::Block* CachingAllocator::find_free(Pool& pool, size_t size, StreamId stream) {
  Block key{nullptr, size, stream, false};
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool.erase(it);
  return b;
}

CachingAllocator::Block* CachingAllocator::new_segment(size_t size, StreamId stream, bool small) {
  void* p = raw_.malloc(size);
  if (!p) return nullptr;
  ++stats_.raw_mallocs;
  stats_.reserved += size;
  return new Block{static_cast<char*>(p), size, stream, small};
}

void* CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  size_t size = round_size(nbytes);
  bool small = size <= kSmallSize;
  Block* b = nullptr;
  if (!caching_) {
    b = new_segment(size, stream, small);
  } else {
    Pool& pool = small ? small_pool_ : large_pool_;
    b = find_free(pool, size, stream);
    if (!b) {
      size_t seg = segment_size(size);
      b = new_segment(seg, stream, small);
      if (!b) {  // out of memory: give back what is cached and try once more
        release_free_segments();
        b = new_segment(seg, stream, small);
      }
    }
    if (b) {
      size_t remaining = b->size - size;
      if (small ? remaining >= kMinBlockSize : remaining > kSmallSize) {
        Block* rest = new Block{b->ptr + size, remaining, stream, small, false, b, b->next};
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
  pool.insert(b);
}

void CachingAllocator::release_free_segments() {
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    std::vector<Block*> whole;
    for (Block* b : *pool)
      if (!b->prev && !b->next) whole.push_back(b);
    for (Block* b : whole) {
      pool->erase(b);
      raw_.free(b->ptr);
      ++stats_.raw_frees;
      stats_.reserved -= b->size;
      delete b;
    }
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
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
