// core/host_allocator.cpp: aligned host blocks carved out of malloc, the per-thread cache that
// keeps recently freed small blocks for reuse, and a shared cache of large blocks.
#include "core/host_allocator.h"

#include "ember/settings.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>

#include <sys/mman.h>
#include <unistd.h>

#include "ember/error.h"

namespace ember {

namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMinClass = 64;  // smallest cached block
constexpr int kClasses = std::countr_zero(kMaxCachedBlock) - std::countr_zero(kMinClass) + 1;
constexpr int kBlocksPerClass = 64;
constexpr size_t kMaxCachedBytes = size_t{4} << 20;  // per thread

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer every block goes straight back to malloc, so use-after-free is caught.
constexpr bool kCaching = false;
#else
constexpr bool kCaching = true;
#endif

// Blocks of kMinHugeBlock bytes or more are mapped directly, 2 MiB aligned, and marked for
// transparent huge pages (most systems leave THP to madvise): a 128 MiB tensor then takes 64 page
// faults instead of 32768 on first touch, and streaming over it misses the TLB once per 2 MiB.
constexpr size_t kHugePage = size_t{2} << 20;

// A huge block's data starts on a 2 MiB boundary and fills whole huge pages; its header lives at
// the end of one ordinary page mapped just before it.
size_t huge_data_bytes(size_t nbytes) {
  return (nbytes + kHugePage - 1) / kHugePage * kHugePage;
}
size_t page_bytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
  return page;
}

// Two words just below the aligned block keep the pointer malloc (or mmap) returned and the
// block's size (what it was allocated for, which a reused block may exceed). glibc's aligned_alloc
// splits and later re-merges chunks on every call, which made it the largest single cost of an op
// on a tiny tensor.
void* raw_allocate(size_t nbytes) {
  constexpr size_t kHeader = 2 * sizeof(void*);
  void* raw = nullptr;
  void* p = nullptr;
  if (kCaching && nbytes >= kMinHugeBlock && nbytes <= SIZE_MAX / 2) {
    // Over-map by two huge pages, then trim to [header page, 2 MiB aligned data).
    const size_t data = huge_data_bytes(nbytes), page = page_bytes(), total = data + 2 * kHugePage;
    void* m = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      const auto start = reinterpret_cast<uintptr_t>(m);
      const uintptr_t aligned = (start + page + kHugePage - 1) / kHugePage * kHugePage;
      if (aligned - page > start) munmap(m, aligned - page - start);
      munmap(reinterpret_cast<void*>(aligned + data), start + total - (aligned + data));
      raw = reinterpret_cast<void*>(aligned - page);
      p = reinterpret_cast<void*>(aligned);
      madvise(p, data, MADV_HUGEPAGE);  // advice only: without THP the pages stay 4 KiB
    }
  } else {
    size_t rounded = (std::max<size_t>(nbytes, 1) + kAlign - 1) / kAlign * kAlign;
    raw = nbytes <= SIZE_MAX / 2 ? std::malloc(rounded + kAlign + kHeader) : nullptr;
    if (raw) {
      auto base = reinterpret_cast<uintptr_t>(raw) + kHeader;
      p = reinterpret_cast<void*>((base + kAlign - 1) / kAlign * kAlign);
    }
  }
  EMBER_CHECK_KIND(OutOfMemory, p != nullptr, "[cpu] out of memory: tried to allocate ", nbytes,
                   " bytes");
  static_cast<void**>(p)[-1] = raw;
  static_cast<size_t*>(p)[-2] = nbytes;
  return p;
}

size_t block_size(void* p) {
  return static_cast<size_t*>(p)[-2];
}

void raw_deallocate(void* p) {
  size_t nbytes = block_size(p);
  if (kCaching && nbytes >= kMinHugeBlock)
    munmap(static_cast<void**>(p)[-1], page_bytes() + huge_data_bytes(nbytes));
  else
    std::free(static_cast<void**>(p)[-1]);
}

// Freed blocks of kMinLargeBlock bytes or more (everything the per-thread cache does not take),
// shared by all threads. Large blocks come from mmap (glibc maps blocks of 128 KiB and more, and
// trims freed memory at the top of its heap), and every fresh one costs a page fault per page on
// first touch -- for a 128 MiB tensor in 4 KiB pages, more than the arithmetic of an element-wise
// op on it; for the 100 KiB - 1 MiB activations of a small transformer, 7 % of a training step
// when these sizes went to malloc. Reusing them keeps their pages mapped. A block is reused for a
// request of at most its size and at least 3/4 of it; the cache holds at most an eighth of physical
// memory (4 GiB at most) and is emptied when an allocation fails.
constexpr size_t kMinLargeBlock = kMaxCachedBlock + 1;

class LargeBlockCache {
 public:
  LargeBlockCache() {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    size_t ram = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page)
                                       : size_t{1} << 33;
    limit_ = std::min(ram / 8, size_t{4} << 30);
  }
  // A cached block of at least `size` bytes (rounded), or null.
  void* take(size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.lower_bound(size);
    if (it == blocks_.end() || it->first - size > it->first / 4) return nullptr;
    void* p = it->second;
    bytes_ -= it->first;
    blocks_.erase(it);
    return p;
  }
  // Keeps a freed block; false when the cache is full (the caller frees it).
  bool keep(void* p) {
    size_t size = block_size(p);
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes_ + size > limit_) return false;
    blocks_.emplace(size, p);
    bytes_ += size;
    return true;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [size, p] : blocks_) raw_deallocate(p);
    blocks_.clear();
    bytes_ = 0;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> blocks_;  // by block size
  size_t bytes_ = 0, limit_ = 0;
};

// Rounds large sizes to 64 KiB, so that nearby sizes share blocks.
size_t large_size(size_t nbytes) {
  constexpr size_t kStep = size_t{1} << 16;
  return (nbytes + kStep - 1) / kStep * kStep;
}

LargeBlockCache& large_cache() {
  static auto* cache = new LargeBlockCache();  // never destroyed: blocks may be freed at exit
  return *cache;
}

// Size class of a cached block: blocks are power-of-two sizes from kMinClass to kMaxCachedBlock.
int class_of(size_t nbytes) {
  size_t size = std::bit_ceil(std::max(nbytes, kMinClass));
  return std::countr_zero(size) - std::countr_zero(kMinClass);
}

// Freed blocks of one thread, by size class.
struct BlockCache {
  std::array<std::array<void*, kBlocksPerClass>, kClasses> blocks{};
  std::array<int, kClasses> count{};
  size_t bytes = 0;

  ~BlockCache() { clear(); }
  void clear() {
    for (int c = 0; c < kClasses; ++c) {
      for (int i = 0; i < count[c]; ++i) raw_deallocate(blocks[c][i]);
      count[c] = 0;
    }
    bytes = 0;
  }
};

// The thread's cache, reached through one pointer in static TLS (initial-exec: no
// __tls_get_addr call on every allocation, and only 9 bytes of the static TLS that libraries
// loaded with dlopen share). The cache itself lives on the heap.
[[gnu::tls_model("initial-exec")]] constinit thread_local BlockCache* t_cache = nullptr;
// Set once the thread's cache is gone: blocks freed later (by objects destroyed after the
// thread's locals) go straight back to malloc.
[[gnu::tls_model("initial-exec")]] constinit thread_local bool t_cache_gone = false;

// Frees the thread's cache when the thread ends.
struct CacheOwner {
  ~CacheOwner() {
    delete t_cache;
    t_cache = nullptr;
    t_cache_gone = true;
  }
};

BlockCache* cache() {
  if (t_cache) [[likely]]
    return t_cache;
  if (!kCaching || t_cache_gone) return nullptr;
  thread_local CacheOwner owner;
  t_cache = new BlockCache();
  return t_cache;
}

}  // namespace

void* host_allocate(size_t nbytes) {
  if (kCaching && nbytes >= kMinLargeBlock) {
    size_t size = large_size(nbytes);
    if (void* p = large_cache().take(size)) return p;
    try {
      return raw_allocate(size);
    } catch (const Error&) {
      large_cache().clear();
      return raw_allocate(size);
    }
  }
  BlockCache* bc = nbytes <= kMaxCachedBlock ? cache() : nullptr;
  if (!bc) return raw_allocate(nbytes);
  int c = class_of(nbytes);
  if (bc->count[c] > 0) {
    bc->bytes -= kMinClass << c;
    return bc->blocks[c][--bc->count[c]];
  }
  return raw_allocate(kMinClass << c);
}

void host_deallocate(void* ptr, size_t nbytes) {
  if (kCaching && nbytes >= kMinLargeBlock) {
    if (!large_cache().keep(ptr)) raw_deallocate(ptr);
    return;
  }
  BlockCache* bc = nbytes <= kMaxCachedBlock ? cache() : nullptr;
  if (!bc) return raw_deallocate(ptr);
  int c = class_of(nbytes);
  size_t size = kMinClass << c;
  if (bc->count[c] == kBlocksPerClass || bc->bytes + size > kMaxCachedBytes)
    return raw_deallocate(ptr);
  bc->blocks[c][bc->count[c]++] = ptr;
  bc->bytes += size;
}

void host_empty_cache() {
  if (t_cache) t_cache->clear();
  if (kCaching) large_cache().clear();
}

void empty_host_cache() {
  host_empty_cache();
}

}  // namespace ember
