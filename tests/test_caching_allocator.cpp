// tests/test_caching_allocator.cpp: the CUDA caching allocator's bookkeeping (rounding, pools per
// stream, splitting, coalescing, statistics, out-of-memory recovery) over a fake raw allocator,
// so it runs on every machine.
#include <gtest/gtest.h>

#include <map>

#include "backend/cuda/caching_allocator.h"
#include "ember/error.h"

namespace ember::cuda_alloc {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Hands out distinct fake addresses (never dereferenced) up to a capacity.
class FakeRaw : public RawAllocator {
 public:
  explicit FakeRaw(size_t capacity = size_t{1} << 40) : capacity_(capacity) {}
  void* malloc(size_t n) override {
    if (in_use_ + n > capacity_) return nullptr;
    in_use_ += n;
    ++mallocs;
    void* p = reinterpret_cast<void*>(next_);
    next_ += (n + 4095) / 4096 * 4096 + 4096;
    sizes_[p] = n;
    return p;
  }
  void free(void* p) override {
    auto it = sizes_.find(p);
    ASSERT_NE(it, sizes_.end()) << "raw free of an unknown pointer";
    in_use_ -= it->second;
    sizes_.erase(it);
    ++frees;
  }
  size_t in_use() const { return in_use_; }
  int mallocs = 0, frees = 0;

 private:
  size_t capacity_, in_use_ = 0;
  uintptr_t next_ = uintptr_t{1} << 32;
  std::map<void*, size_t> sizes_;
};

char* as_bytes(void* p) {
  return static_cast<char*>(p);
}

TEST(CachingAllocator, RoundsSizesAndPicksSegments) {
  EXPECT_EQ(CachingAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingAllocator::round_size(512), 512u);
  EXPECT_EQ(CachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(CachingAllocator::segment_size(512), 2 * kMiB);
  EXPECT_EQ(CachingAllocator::segment_size(kMiB), 2 * kMiB);
  EXPECT_EQ(CachingAllocator::segment_size(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(CachingAllocator::segment_size(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(CachingAllocator::segment_size(11 * kMiB + 512), 12 * kMiB);
}

TEST(CachingAllocator, SmallBlocksShareOneSegment) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* p1 = a.allocate(1000, 0);
  void* p2 = a.allocate(1000, 0);
  void* p3 = a.allocate(1, 0);
  EXPECT_EQ(raw.mallocs, 1);
  EXPECT_EQ(as_bytes(p2), as_bytes(p1) + 1024);
  EXPECT_EQ(as_bytes(p3), as_bytes(p2) + 1024);
  Stats s = a.stats();
  EXPECT_EQ(s.allocated, 2560u);
  EXPECT_EQ(s.reserved, 2 * kMiB);
  a.free(p1);
  a.free(p2);
  a.free(p3);
  EXPECT_EQ(a.stats().allocated, 0u);
  EXPECT_EQ(a.stats().reserved, 2 * kMiB);  // cached, not given back
  EXPECT_EQ(raw.frees, 0);
}

TEST(CachingAllocator, SteadyStateNeedsNoRawCalls) {
  FakeRaw raw;
  CachingAllocator a(raw);
  for (int iter = 0; iter < 100; ++iter) {
    void* x = a.allocate(4096, 0);
    void* y = a.allocate(3 * kMiB, 0);
    void* z = a.allocate(300, 0);
    a.free(y);
    a.free(x);
    a.free(z);
  }
  EXPECT_EQ(raw.mallocs, 2);  // one small and one large segment, reused ever after
  EXPECT_EQ(raw.frees, 0);
}

TEST(CachingAllocator, CoalescesFreedNeighbours) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* p1 = a.allocate(1024, 0);
  void* p2 = a.allocate(1024, 0);
  void* p3 = a.allocate(1024, 0);
  a.free(p1);
  a.free(p2);
  // p1 and p2 merged into one 2048-byte block: the best fit for 2048 bytes.
  EXPECT_EQ(a.allocate(2048, 0), p1);
  a.free(p1);
  a.free(p3);
  // Everything merged back into the whole segment, which empty_cache gives back.
  a.empty_cache();
  EXPECT_EQ(raw.frees, 1);
  EXPECT_EQ(a.stats().reserved, 0u);
  EXPECT_EQ(raw.in_use(), 0u);
}

TEST(CachingAllocator, EmptyCacheKeepsSegmentsInUse) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* used = a.allocate(1024, 0);
  void* idle = a.allocate(12 * kMiB, 0);
  a.free(idle);
  a.empty_cache();
  EXPECT_EQ(raw.frees, 1);
  EXPECT_EQ(a.stats().reserved, 2 * kMiB);
  a.free(used);
}

TEST(CachingAllocator, StreamsHaveTheirOwnPools) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* p = a.allocate(4096, 1);
  a.free(p);
  void* q = a.allocate(4096, 2);  // a block freed on stream 1 is not handed to stream 2
  EXPECT_NE(q, p);
  EXPECT_EQ(raw.mallocs, 2);
  EXPECT_EQ(a.allocate(4096, 1), p);  // but is reused on stream 1
  a.free(p);
  a.free(q);
}

TEST(CachingAllocator, LargeBlocksSplitOnlyForALargeRemainder) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* big = a.allocate(19 * kMiB + kMiB / 2, 0);  // 20 MiB segment, 0.5 MiB left: not split
  EXPECT_EQ(a.stats().allocated, 20 * kMiB);
  void* p = a.allocate(2 * kMiB, 0);  // a new 20 MiB segment, split
  void* q = a.allocate(4 * kMiB, 0);  // from the rest of it
  EXPECT_EQ(raw.mallocs, 2);
  EXPECT_EQ(as_bytes(q), as_bytes(p) + 2 * kMiB);
  EXPECT_EQ(a.stats().allocated, 26 * kMiB);
  a.free(big);
  a.free(p);
  a.free(q);
  EXPECT_EQ(a.stats().reserved, 40 * kMiB);
}

TEST(CachingAllocator, OutOfMemoryEmptiesTheCacheAndRetries) {
  FakeRaw raw(40 * kMiB);
  CachingAllocator a(raw);
  void* p = a.allocate(12 * kMiB, 0);
  a.free(p);                           // 12 MiB cached
  void* q = a.allocate(30 * kMiB, 0);  // fits only once the cached segment is given back
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(raw.frees, 1);
  EXPECT_EQ(a.allocate(30 * kMiB, 0), nullptr);  // really out of memory
  EXPECT_EQ(a.stats().allocated, 30 * kMiB);
  a.free(q);
  void* r = a.allocate(30 * kMiB, 0);  // recovered: the freed block serves it
  EXPECT_EQ(r, q);
  a.free(r);
}

TEST(CachingAllocator, TracksPeakAndResetsIt) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* p = a.allocate(3 * kMiB, 0);
  void* q = a.allocate(5 * kMiB, 0);
  a.free(q);
  EXPECT_EQ(a.stats().peak_allocated, 8 * kMiB);
  EXPECT_EQ(a.stats().allocated, 3 * kMiB);
  a.reset_peak();
  EXPECT_EQ(a.stats().peak_allocated, 3 * kMiB);
  a.free(p);
}

TEST(CachingAllocator, WithoutCachingEveryBlockIsARawCall) {
  FakeRaw raw;
  CachingAllocator a(raw, /*caching=*/false);
  void* p = a.allocate(1000, 0);
  void* q = a.allocate(1000, 0);
  EXPECT_EQ(raw.mallocs, 2);
  EXPECT_EQ(a.stats().reserved, 2048u);
  a.free(p);
  a.free(q);
  EXPECT_EQ(raw.frees, 2);
  EXPECT_EQ(a.stats().reserved, 0u);
  EXPECT_EQ(raw.in_use(), 0u);
}

TEST(CachingAllocator, ZeroBytesAndBadFrees) {
  FakeRaw raw;
  CachingAllocator a(raw);
  EXPECT_EQ(a.allocate(0, 0), nullptr);
  a.free(nullptr);
  void* p = a.allocate(512, 0);
  a.free(p);
  EXPECT_THROW(a.free(p), Error);
  int x = 0;
  EXPECT_THROW(a.free(&x), Error);
}

TEST(CachingAllocator, FormatsSizesAsPyTorch) {
  EXPECT_EQ(format_bytes(512), "512 bytes");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(20 * kMiB), "20.00 MiB");
  EXPECT_EQ(format_bytes(size_t{2} << 30), "2.00 GiB");
}

}  // namespace
}  // namespace ember::cuda_alloc
