// core/host_allocator.cpp: aligned host blocks carved out of malloc, and the per-thread
// cache that keeps recently freed small blocks for reuse.
#include "core/host_allocator.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstdlib>

#include "ember/error.h"

namespace ember {

namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMinClass = 64;  // smallest cached block
constexpr int kClasses = std::countr_zero(kMaxCachedBlock) - std::countr_zero(kMinClass) + 1;
constexpr int kBlocksPerClass = 64;
constexpr size_t kMaxCachedBytes = size_t{4} << 20;  // per thread

// The pointer malloc returned is kept in the word just below the aligned block. glibc's
// aligned_alloc splits and later re-merges chunks on every call, which made it the largest single
// cost of an op on a tiny tensor.
void* raw_allocate(size_t nbytes) {
  constexpr size_t kExtra = kAlign + sizeof(void*);
  size_t rounded = (std::max<size_t>(nbytes, 1) + kAlign - 1) / kAlign * kAlign;
  void* raw = nbytes <= SIZE_MAX / 2 ? std::malloc(rounded + kExtra) : nullptr;
  EMBER_CHECK_KIND(OutOfMemory, raw != nullptr, "[cpu] out of memory: tried to allocate ", nbytes,
                   " bytes");
  auto base = reinterpret_cast<uintptr_t>(raw) + sizeof(void*);
  void* p = reinterpret_cast<void*>((base + kAlign - 1) / kAlign * kAlign);
  static_cast<void**>(p)[-1] = raw;
  return p;
}

void raw_deallocate(void* p) {
  std::free(static_cast<void**>(p)[-1]);
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

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer every block goes straight back to malloc, so use-after-free is caught.
constexpr bool kCaching = false;
#else
constexpr bool kCaching = true;
#endif

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
}

}  // namespace ember
