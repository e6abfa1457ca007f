// core/host_allocator.h: 64-byte aligned host memory with a small per-thread block cache, for
// CPU tensor data and for the small objects every op makes (tensor heads, storages, nodes).
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace ember {

// Returns 64-byte aligned memory of at least nbytes; throws an OutOfMemory Error when the system
// has none. Blocks up to kMaxCachedBlock bytes come from (and return to) a per-thread cache of
// recently freed blocks, so the many small tensors of a training step skip malloc and free.
void* host_allocate(size_t nbytes);
// Releases a block of host_allocate; nbytes is the size asked for. Any thread may free a block.
void host_deallocate(void* ptr, size_t nbytes);
// Frees every block cached by the calling thread, and the shared cache of larger blocks (over
// kMaxCachedBlock, kept so their pages stay mapped; at most an eighth of physical memory).
void host_empty_cache();

inline constexpr size_t kMaxCachedBlock = size_t{1} << 16;
// Blocks of this many bytes or more are mapped 2 MiB aligned and marked for transparent huge pages
// (not under AddressSanitizer).
inline constexpr size_t kMinHugeBlock = size_t{4} << 20;

// A standard allocator over host_allocate, for std::allocate_shared.
template <class T>
struct CachedAllocator {
  using value_type = T;
  CachedAllocator() = default;
  template <class U>
  CachedAllocator(const CachedAllocator<U>&) {}  // NOLINT: rebinding is implicit
  T* allocate(size_t n) { return static_cast<T*>(host_allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { host_deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const CachedAllocator<U>&) const {
    return true;
  }
};

// std::make_shared with the object and its control block from the block cache.
template <class T, class... Args>
std::shared_ptr<T> make_cached_shared(Args&&... args) {
  return std::allocate_shared<T>(CachedAllocator<T>{}, std::forward<Args>(args)...);
}

}  // namespace ember
