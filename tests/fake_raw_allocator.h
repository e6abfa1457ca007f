// tests/fake_raw_allocator.h: a RawAllocator for the CUDA allocators' bookkeeping tests (device
// caching allocator, pinned host cache): distinct fake addresses (never dereferenced) up to a
// capacity, and fake events that complete only when the test says so.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "backend/cuda/caching_allocator.h"

namespace ember::cuda_alloc {

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
  // Event ids are 1, 2, ...; an event is done once complete() (or synchronize_event) ran.
  EventId record_event(StreamId stream) override {
    events.push_back({stream, false, false});
    return events.size();
  }
  bool event_done(EventId e) override { return event(e).done; }
  void synchronize_event(EventId e) override {
    event(e).done = true;
    ++synchronized;
  }
  void release_event(EventId e) override {
    EXPECT_FALSE(event(e).released) << "event " << e << " released twice";
    event(e).released = true;
  }
  // Marks every event recorded on `stream` done (the stream's work so far has finished).
  void complete(StreamId stream) {
    for (FakeEvent& e : events)
      if (e.stream == stream) e.done = true;
  }
  size_t in_use() const { return in_use_; }
  size_t unreleased_events() const {
    size_t n = 0;
    for (const FakeEvent& e : events) n += !e.released;
    return n;
  }

  struct FakeEvent {
    StreamId stream;
    bool done, released;
  };
  std::vector<FakeEvent> events;
  int mallocs = 0, frees = 0, synchronized = 0;

 private:
  FakeEvent& event(EventId e) {
    EXPECT_TRUE(e >= 1 && e <= events.size()) << "unknown event " << e;
    return events.at(e - 1);
  }
  size_t capacity_, in_use_ = 0;
  uintptr_t next_ = uintptr_t{1} << 32;
  std::map<void*, size_t> sizes_;
};

}  // namespace ember::cuda_alloc
