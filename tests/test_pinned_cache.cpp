// tests/test_pinned_cache.cpp: the pinned host cache's bookkeeping (power-of-two sizes, reuse
// only after recorded copies finish, trimming of idle blocks beyond a limit, empty_cache,
// out-of-memory recovery) over a fake raw allocator with fake events, so it runs on every machine.
#include <gtest/gtest.h>

#include "backend/cuda/pinned_cache.h"
#include "ember/error.h"
#include "fake_raw_allocator.h"

namespace ember::cuda_alloc {
namespace {

char* as_bytes(void* p) {
  return static_cast<char*>(p);
}

TEST(PinnedCache, RoundsToPowersOfTwo) {
  EXPECT_EQ(PinnedCache::round_size(1), 512u);
  EXPECT_EQ(PinnedCache::round_size(512), 512u);
  EXPECT_EQ(PinnedCache::round_size(513), 1024u);
  EXPECT_EQ(PinnedCache::round_size(3 << 20), size_t{4} << 20);
}

TEST(PinnedCache, ReusesAFreedBlockOfTheSameSize) {
  FakeRaw raw;
  PinnedCache c(raw);
  EXPECT_EQ(c.allocate(0), nullptr);
  void* p = c.allocate(1000);
  c.free(p);
  EXPECT_EQ(c.stats().cached, 1024u);
  EXPECT_EQ(c.allocate(600), p);
  EXPECT_EQ(raw.mallocs, 1);
  EXPECT_EQ(c.stats().in_use, 1024u);
  EXPECT_EQ(c.stats().cached, 0u);
  void* q = c.allocate(2000);  // another size: another block
  EXPECT_NE(q, p);
  c.free(p);
  c.free(q);
  EXPECT_THROW(c.free(q), Error);
}

TEST(PinnedCache, ABlockIsReusedOnlyAfterItsCopiesFinish) {
  FakeRaw raw;
  PinnedCache c(raw);
  void* p = c.allocate(4096);
  EXPECT_TRUE(c.record_use(as_bytes(p) + 100, 7));  // any address inside the block
  int x = 0;
  EXPECT_FALSE(c.record_use(&x, 7));
  EXPECT_TRUE(c.contains(as_bytes(p) + 4095));
  EXPECT_FALSE(c.contains(as_bytes(p) + 4096));
  c.free(p);
  void* q = c.allocate(4096);  // the copy may still read p
  EXPECT_NE(q, p);
  raw.complete(7);
  void* r = c.allocate(4096);
  EXPECT_EQ(r, p);
  EXPECT_EQ(raw.unreleased_events(), 0u);
  c.free(q);
  c.free(r);
}

TEST(PinnedCache, IdleBlocksBeyondTheLimitGoBackOldestFirst) {
  FakeRaw raw;
  PinnedCache c(raw, /*max_idle_bytes=*/8192);
  void* b[4];
  for (void*& p : b) p = c.allocate(4096);
  for (void* p : b) c.free(p);
  EXPECT_EQ(c.stats().cached, 8192u);
  EXPECT_EQ(raw.frees, 2);
  EXPECT_FALSE(c.contains(b[0]));  // the two freed first went back
  EXPECT_FALSE(c.contains(b[1]));
  EXPECT_TRUE(c.contains(b[2]));
  EXPECT_TRUE(c.contains(b[3]));
  EXPECT_EQ(raw.in_use(), 8192u);
}

TEST(PinnedCache, BlocksStillBeingCopiedAreNotGivenBack) {
  FakeRaw raw;
  PinnedCache c(raw, /*max_idle_bytes=*/0);
  void* p = c.allocate(4096);
  c.record_use(p, 3);
  c.free(p);  // over the limit, but a copy still uses it
  EXPECT_EQ(raw.frees, 0);
  EXPECT_TRUE(c.contains(p));
  c.empty_cache();
  EXPECT_EQ(raw.frees, 0);
  raw.complete(3);
  c.empty_cache();
  EXPECT_EQ(raw.frees, 1);
  EXPECT_EQ(c.stats().cached, 0u);
  EXPECT_EQ(raw.in_use(), 0u);
}

TEST(PinnedCache, EmptyCacheKeepsBlocksInUse) {
  FakeRaw raw;
  PinnedCache c(raw);
  void* used = c.allocate(1 << 20);
  void* idle = c.allocate(1 << 16);
  c.free(idle);
  c.empty_cache();
  EXPECT_EQ(raw.frees, 1);
  EXPECT_TRUE(c.contains(used));
  EXPECT_FALSE(c.contains(idle));
  EXPECT_EQ(c.stats().in_use, size_t{1} << 20);
  c.free(used);
}

TEST(PinnedCache, OutOfMemoryGivesIdleBlocksBackAndRetries) {
  FakeRaw raw(5 << 20);
  PinnedCache c(raw);
  void* p = c.allocate(2 << 20);
  c.free(p);                                    // 2 MiB idle
  void* q = c.allocate((size_t{2} << 20) + 1);  // 4 MiB fits only once p is given back
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(raw.frees, 1);
  EXPECT_FALSE(c.contains(p));
  EXPECT_EQ(c.allocate(2 << 20), nullptr);  // really out of memory
  c.free(q);
}

}  // namespace
}  // namespace ember::cuda_alloc
