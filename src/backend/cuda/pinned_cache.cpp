// backend/cuda/pinned_cache.cpp: reuse, event tracking and trimming of pinned host blocks (see
// pinned_cache.h).
#include "backend/cuda/pinned_cache.h"

#include "ember/error.h"

namespace ember::cuda_alloc {

PinnedCache::PinnedCache(RawAllocator& raw, size_t max_idle_bytes)
    : raw_(raw), max_idle_(max_idle_bytes) {}

PinnedCache::~PinnedCache() {
  for (auto& [base, b] : blocks_) {
    for (EventId e : b.pending) {
      raw_.synchronize_event(e);
      raw_.release_event(e);
    }
    raw_.free(reinterpret_cast<void*>(base));
  }
}

size_t PinnedCache::round_size(size_t nbytes) {
  size_t size = 512;
  while (size < nbytes) size <<= 1;
  return size;
}

bool PinnedCache::copies_done(Block& b) {
  for (EventId e : b.pending)
    if (!raw_.event_done(e)) return false;
  for (EventId e : b.pending) raw_.release_event(e);
  b.pending.clear();
  return true;
}

void PinnedCache::release(Blocks::iterator it) {
  raw_.free(reinterpret_cast<void*>(it->first));
  ++stats_.raw_frees;
  stats_.cached -= it->second.size;
  blocks_.erase(it);
}

void PinnedCache::trim(size_t limit) {
  while (stats_.cached > limit) {
    auto oldest = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
      if (!it->second.in_use &&
          (oldest == blocks_.end() || it->second.freed_at < oldest->second.freed_at)) {
        if (copies_done(it->second)) oldest = it;
      }
    if (oldest == blocks_.end()) return;  // the rest is still being copied: trimmed later
    release(oldest);
  }
}

void* PinnedCache::allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  size_t size = round_size(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [base, b] : blocks_) {
    if (!b.in_use && b.size == size && copies_done(b)) {
      b.in_use = true;
      stats_.cached -= size;
      stats_.in_use += size;
      return reinterpret_cast<void*>(base);
    }
  }
  void* p = raw_.malloc(size);
  if (!p) {  // give back the idle blocks and retry once
    trim(0);
    p = raw_.malloc(size);
    if (!p) return nullptr;
  }
  ++stats_.raw_allocs;
  stats_.in_use += size;
  blocks_.emplace(reinterpret_cast<uintptr_t>(p), Block{size, true, 0, {}});
  return p;
}

void PinnedCache::free(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  EMBER_CHECK_KIND(Value, it != blocks_.end() && it->second.in_use,
                   "[pinned memory] free of a pointer the pinned cache did not hand out (or "
                   "freed twice)");
  it->second.in_use = false;
  it->second.freed_at = ++clock_;
  stats_.in_use -= it->second.size;
  stats_.cached += it->second.size;
  trim(max_idle_);
}

PinnedCache::Blocks::const_iterator PinnedCache::find(const void* ptr) const {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin()) return blocks_.end();
  --it;
  return p < it->first + it->second.size ? it : blocks_.end();
}

bool PinnedCache::record_use(const void* ptr, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = find(ptr);
  if (it == blocks_.end()) return false;
  EventId e = raw_.record_event(stream);
  blocks_.at(it->first).pending.push_back(e);
  return true;
}

bool PinnedCache::contains(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return find(ptr) != blocks_.end();
}

void PinnedCache::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  trim(0);
}

PinnedStats PinnedCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace ember::cuda_alloc
