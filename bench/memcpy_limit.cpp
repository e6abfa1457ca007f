// bench/memcpy_limit.cpp: std::memcpy over several threads (see memcpy_limit.h).
#include "memcpy_limit.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace ember_bench {

void parallel_memcpy(void* dst, const void* src, size_t nbytes, int threads) {
  const size_t n = static_cast<size_t>(std::max(1, threads));
  const size_t chunk = (nbytes + n - 1) / n;
  std::vector<std::thread> workers;
  for (size_t b = 0; b < nbytes; b += chunk) {
    const size_t len = std::min(chunk, nbytes - b);
    workers.emplace_back(
        [=] { std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, len); });
  }
  for (auto& w : workers) w.join();
}

}  // namespace ember_bench
