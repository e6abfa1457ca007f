// tests/test_caching_allocator.cpp: the CUDA caching allocator's bookkeeping (rounding, pools per
// stream, splitting, coalescing, statistics, out-of-memory recovery, record_stream's held-back
// frees) over a fake raw allocator with fake events, so it runs on every machine.
#include <gtest/gtest.h>

#include "backend/cuda/caching_allocator.h"
#include "ember/error.h"
#include "fake_raw_allocator.h"

namespace ember::cuda_alloc {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

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

// Allocates nbytes on stream 1, records stream 2 on the block and frees it: held back.
void* free_while_stream_2_uses(CachingAllocator& a, size_t nbytes) {
  void* p = a.allocate(nbytes, 1);
  a.record_stream(p, 2);
  a.free(p);
  return p;
}

TEST(CachingAllocator, RecordedStreamHoldsTheBlockUntilItsEventCompletes) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* p = free_while_stream_2_uses(a, 1000);
  ASSERT_EQ(raw.events.size(), 1u);  // recorded at free time, on the recorded stream
  EXPECT_EQ(raw.events[0].stream, 2u);
  EXPECT_EQ(a.pending_frees(), 1u);
  EXPECT_EQ(a.stats().allocated, 0u);  // no longer counted as allocated, as in PyTorch
  void* q = a.allocate(1000, 1);       // stream 2 may still use p: not handed out again
  EXPECT_NE(q, p);
  EXPECT_EQ(a.pending_frees(), 1u);
  raw.complete(2);
  void* r = a.allocate(1000, 1);  // the event has completed: p is back in stream 1's pool
  EXPECT_EQ(r, p);
  EXPECT_EQ(a.pending_frees(), 0u);
  EXPECT_EQ(raw.unreleased_events(), 0u);
  a.free(q);
  a.free(r);
}

TEST(CachingAllocator, EveryRecordedStreamMustFinish) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* p = a.allocate(4096, 1);
  a.record_stream(p, 2);
  a.record_stream(p, 3);
  a.record_stream(p, 3);  // recorded once
  a.record_stream(p, 1);  // its own stream: nothing to wait for
  a.free(p);
  EXPECT_EQ(raw.events.size(), 2u);
  raw.complete(2);
  void* q = a.allocate(4096, 1);
  EXPECT_NE(q, p);  // stream 3 is still at work
  raw.complete(3);
  void* r = a.allocate(4096, 1);
  EXPECT_EQ(r, p);
  a.free(q);
  a.free(r);
  EXPECT_EQ(raw.unreleased_events(), 0u);
}

TEST(CachingAllocator, HeldBackBlocksDoNotMergeWithNeighbours) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* p1 = a.allocate(1024, 1);
  void* p2 = a.allocate(1024, 1);
  a.record_stream(p2, 2);
  a.free(p2);
  a.free(p1);  // p1's neighbour p2 is held back: p1 stays a 1024-byte block
  EXPECT_EQ(a.allocate(2048, 1), as_bytes(p2) + 1024);
  EXPECT_EQ(a.allocate(1024, 1), p1);
}

TEST(CachingAllocator, RecordStreamOfOtherMemoryIsIgnored) {
  FakeRaw raw;
  CachingAllocator a(raw);
  int x = 0;
  a.record_stream(&x, 2);  // not from this allocator (e.g. imported through DLPack)
  void* p = a.allocate(512, 1);
  a.free(p);
  a.record_stream(p, 2);  // already freed
  EXPECT_EQ(a.allocate(512, 1), p);
  EXPECT_TRUE(raw.events.empty());
}

TEST(CachingAllocator, EmptyCacheWaitsForHeldBackBlocks) {
  FakeRaw raw;
  CachingAllocator a(raw);
  free_while_stream_2_uses(a, 4096);
  a.empty_cache();
  EXPECT_EQ(raw.synchronized, 1);
  EXPECT_EQ(raw.frees, 1);  // the whole segment went back
  EXPECT_EQ(a.stats().reserved, 0u);
  EXPECT_EQ(a.pending_frees(), 0u);
  EXPECT_EQ(raw.unreleased_events(), 0u);
}

TEST(CachingAllocator, OutOfMemoryWaitsForHeldBackBlocks) {
  FakeRaw raw(40 * kMiB);
  CachingAllocator a(raw);
  free_while_stream_2_uses(a, 30 * kMiB);
  void* q = a.allocate(30 * kMiB, 3);  // needs p's segment: waits for stream 2, then frees it
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(raw.synchronized, 1);
  EXPECT_EQ(raw.frees, 1);
  a.free(q);
}

TEST(CachingAllocator, CaptureAllocationsComeFromAPrivatePool) {
  FakeRaw raw;
  CachingAllocator a(raw);
  void* before = a.allocate(1000, 1);
  a.free(before);
  PoolId id = a.begin_capture(1);
  void* p = a.allocate(1000, 1);  // not the block freed before the capture
  EXPECT_NE(p, before);
  EXPECT_EQ(raw.mallocs, 2);
  void* other = a.allocate(1000, 2);  // other streams keep their ordinary pools
  a.free(p);
  EXPECT_EQ(a.allocate(1000, 1), p);  // reused within the capture
  a.end_capture(1);
  EXPECT_EQ(a.allocate(1000, 1), before);  // the capture's free block stays in its pool
  a.free(before);
  a.free(p);
  a.free(other);
  a.empty_cache();  // gives back the ordinary segments, not the graph's
  EXPECT_EQ(raw.frees, 2);
  EXPECT_EQ(a.stats().reserved, 2 * kMiB);
  a.release_pool(id);
  EXPECT_EQ(raw.frees, 3);
  EXPECT_EQ(a.stats().reserved, 0u);
}

TEST(CachingAllocator, ARetiredPoolGoesBackWhenItsLastBlockIsFreed) {
  FakeRaw raw;
  CachingAllocator a(raw);
  PoolId id = a.begin_capture(1);
  void* kept = a.allocate(3 * kMiB, 1);  // e.g. the graph's output tensor, still referenced
  void* temp = a.allocate(512, 1);
  a.free(temp);
  a.end_capture(1);
  a.release_pool(id);
  EXPECT_EQ(raw.frees, 1);  // the small segment; the large one is still in use
  a.free(kept);
  EXPECT_EQ(raw.frees, 2);
  EXPECT_EQ(a.stats().reserved, 0u);
  EXPECT_THROW(
      {
        a.begin_capture(4);
        a.begin_capture(4);
      },
      Error);
}

TEST(CachingAllocator, FormatsSizesAsPyTorch) {
  EXPECT_EQ(format_bytes(512), "512 bytes");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(20 * kMiB), "20.00 MiB");
  EXPECT_EQ(format_bytes(size_t{2} << 30), "2.00 GiB");
}

}  // namespace
}  // namespace ember::cuda_alloc
