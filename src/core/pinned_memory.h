// core/pinned_memory.h: page-locked host memory for fast and asynchronous host<->GPU copies,
// from a small cache of cudaHostAlloc blocks. A build without CUDA has none: pinned_allocate
// throws and is_pinned_pointer is false.
#pragma once

#include <cstddef>

namespace ember {

// Pinned host memory of at least nbytes (nullptr for 0); throws an Error without CUDA or a GPU.
void* pinned_allocate(size_t nbytes);
// Returns a block to the cache; it is reused once the copies that read or wrote it are done.
void pinned_free(void* ptr);
// Whether pin_memory can work here (CUDA built in and a GPU present).
bool pinned_memory_available();
// Whether ptr points into a block from pinned_allocate.
bool is_pinned_pointer(const void* ptr);
// Gives cached pinned blocks no tensor uses (and no copy still reads or writes) back to the
// driver; part of cuda::empty_cache().
void pinned_empty_cache();

}  // namespace ember
