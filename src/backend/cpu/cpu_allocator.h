// backend/cpu/cpu_allocator.h: 64-byte aligned host memory with a small per-thread block cache.
#pragma once

#include <cstddef>

namespace ember::cpu {

// Returns 64-byte aligned memory of at least nbytes; throws an OutOfMemory Error when the system
// has none. Blocks up to kMaxCachedBlock bytes come from (and return to) a per-thread cache of
// recently freed blocks, so the many small tensors of a training step skip malloc and free.
void* host_allocate(size_t nbytes);
// Releases a block of host_allocate; nbytes is the size asked for. Any thread may free a block.
void host_deallocate(void* ptr, size_t nbytes);
// Frees every block cached by the calling thread.
void host_empty_cache();

inline constexpr size_t kMaxCachedBlock = size_t{1} << 16;

}  // namespace ember::cpu
