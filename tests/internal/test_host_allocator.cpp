// tests/internal/test_host_allocator.cpp: the host block allocator -- alignment, reuse of
// freed small blocks within a thread, large blocks, huge-page blocks, and blocks freed on
// another thread; the public empty_host_cache() giving freed blocks back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "core/host_allocator.h"
#include "ember/ember.h"

namespace ember {
namespace {

bool aligned64(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 64 == 0;
}

TEST(HostAllocator, BlocksAre64ByteAlignedAndWritable) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000}, kMaxCachedBlock,
                   kMaxCachedBlock + 1, size_t{1} << 22}) {
    void* p = host_allocate(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_TRUE(aligned64(p)) << n;
    std::memset(p, 0xab, n);
    host_deallocate(p, n);
  }
}

TEST(HostAllocator, FreedSmallBlockIsReusedForTheSameSizeClass) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the block cache is off under AddressSanitizer";
#else
  host_empty_cache();
  void* p = host_allocate(100);
  host_deallocate(p, 100);
  // 100 and 120 bytes both round up to the 128-byte class.
  void* q = host_allocate(120);
  EXPECT_EQ(q, p);
  // A block of another class is not handed out for it.
  void* r = host_allocate(1000);
  EXPECT_NE(r, q);
  host_deallocate(q, 120);
  host_deallocate(r, 1000);
  host_empty_cache();
#endif
}

TEST(HostAllocator, LargeBlocksAreReusedForRequestsTheyFit) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the block caches are off under AddressSanitizer";
#else
  host_empty_cache();
  size_t big = size_t{8} << 20;
  auto* p = static_cast<unsigned char*>(host_allocate(big));
  EXPECT_TRUE(aligned64(p));
  std::memset(p, 7, big);
  host_deallocate(p, big);
  // A slightly smaller request gets the same block, whole and writable to its full size.
  auto* q = static_cast<unsigned char*>(host_allocate(big - 1000));
  EXPECT_EQ(q, p);
  std::memset(q, 9, big - 1000);
  // Freed again with its smaller size, the block keeps its real size: an 8 MiB request fits.
  host_deallocate(q, big - 1000);
  auto* r = static_cast<unsigned char*>(host_allocate(big));
  EXPECT_EQ(r, p);
  std::memset(r, 1, big);
  // A request for much less than a cached block does not take it (at most a quarter wasted).
  auto* s = static_cast<unsigned char*>(host_allocate(size_t{2} << 20));
  host_deallocate(r, big);
  auto* t = static_cast<unsigned char*>(host_allocate(size_t{2} << 20));
  EXPECT_NE(t, r);
  host_deallocate(s, size_t{2} << 20);
  host_deallocate(t, size_t{2} << 20);
  host_empty_cache();
#endif
}

// The mappings of /proc/self/maps overlapping [begin, end), and whether any of them (per
// /proc/self/smaps) is eligible for transparent huge pages (unused under AddressSanitizer).
struct Mapped {
  bool overlaps = false;
  bool thp_eligible = false;
};
[[maybe_unused]] Mapped mapped(uintptr_t begin, uintptr_t end) {
  std::ifstream smaps("/proc/self/smaps");
  Mapped m;
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 &&
        line.find(':') > line.find(' ')) {
      inside = lo < end && begin < hi;
      m.overlaps |= inside;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      m.thp_eligible |= line.find('1') != std::string::npos;
    }
  }
  return m;
}

// The process's resident set (/proc/self/statm), in bytes.
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// A freed 64 MiB tensor stays cached (resident) until the public empty_host_cache() gives it
// back.
TEST(HostAllocator, EmptyHostCacheReturnsFreedTensorsToTheSystem) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the block caches are off under AddressSanitizer";
#else
  host_empty_cache();
  {
    Tensor t = full({int64_t{16} << 20}, 1.0);  // 64 MiB of float32, every page touched
    ASSERT_EQ(t.sum().item<double>(), double(int64_t{16} << 20));
  }
  const size_t cached = resident_bytes();
  empty_host_cache();
  const size_t released = resident_bytes();
  EXPECT_GE(cached, released + (size_t{48} << 20)) << cached << " -> " << released;
#endif
}

TEST(HostAllocator, HugeBlocksAreHugePageAlignedAndUnmappedWhenFreed) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "huge blocks are off under AddressSanitizer";
#else
  host_empty_cache();
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(thp, mode);
  const bool thp_on = !mode.empty() && mode.find("[never]") == std::string::npos;
  constexpr size_t kHuge = size_t{2} << 20;
  for (size_t n : {size_t{4} << 20, (size_t{4} << 20) + 1, (size_t{7} << 20) + 123}) {
    SCOPED_TRACE(n);
    auto* p = static_cast<unsigned char*>(host_allocate(n));
    auto begin = reinterpret_cast<uintptr_t>(p);
    EXPECT_EQ(begin % kHuge, 0u);
    std::memset(p, 5, n);
    EXPECT_EQ(std::count(p, p + n, 5), static_cast<std::ptrdiff_t>(n));
    uintptr_t end = begin + (n + kHuge - 1) / kHuge * kHuge;
    Mapped live = mapped(begin, end);
    EXPECT_TRUE(live.overlaps);
    if (thp_on) {
      EXPECT_TRUE(live.thp_eligible) << "THP mode: " << mode;
    }
    host_deallocate(p, n);
    host_empty_cache();  // the block leaves the large-block cache and is unmapped, header and all
    EXPECT_FALSE(mapped(begin - 4096, end).overlaps);
  }
#endif
}

TEST(HostAllocator, BlockFreedOnAnotherThreadStaysUsable) {
  // A batch made on a loader thread and freed on the main thread (and the reverse) goes into the
  // freeing thread's cache; the memory stays intact and usable there.
  auto* p = static_cast<unsigned char*>(host_allocate(256));
  std::memset(p, 1, 256);
  int intact = 0;
  std::thread t([p, &intact] {
    intact = std::count(p, p + 256, 1);
    host_deallocate(p, 256);
    auto* q = static_cast<unsigned char*>(host_allocate(256));
    std::memset(q, 2, 256);
    host_deallocate(q, 256);
  });
  t.join();
  EXPECT_EQ(intact, 256);
  auto* r = static_cast<unsigned char*>(host_allocate(256));
  EXPECT_TRUE(aligned64(r));
  std::memset(r, 3, 256);
  EXPECT_EQ(std::count(r, r + 256, 3), 256);
  host_deallocate(r, 256);
}

}  // namespace
}  // namespace ember
