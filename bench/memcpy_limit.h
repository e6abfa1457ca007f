// bench/memcpy_limit.h: the machine's copy bandwidth, the limit memory-bound ops are compared
// against -- std::memcpy split over the benchmark's threads.
#pragma once

#include <cstddef>

namespace ember_bench {

// Copies nbytes from src to dst, the range split evenly over `threads` threads.
void parallel_memcpy(void* dst, const void* src, size_t nbytes, int threads);

}  // namespace ember_bench
