// data/batch_prefetcher.cpp: the worker loop -- a bounded window of batches, handed out in order.
#include "data/batch_prefetcher.h"

#include <utility>

#include "ember/ops.h"

namespace ember::data::detail {

BatchPrefetcher::BatchPrefetcher(size_t num_batches, int num_workers, size_t max_ahead, LoadFn load)
    : num_batches_(num_batches), max_ahead_(max_ahead), load_(std::move(load)) {
  threads_.reserve(static_cast<size_t>(num_workers));
  try {
    for (int i = 0; i < num_workers; ++i) threads_.emplace_back([this] { work(); });
  } catch (...) {
    stop_and_join();
    throw;
  }
}

BatchPrefetcher::~BatchPrefetcher() {
  stop_and_join();
}

void BatchPrefetcher::stop_and_join() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  room_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void BatchPrefetcher::work() {
  // Batches are small copies; one kernel thread per worker keeps workers from each starting a
  // full OpenMP team (this sets the calling thread's count only), as PyTorch's workers do.
  set_num_threads(1);
  std::unique_lock lock(mutex_);
  while (true) {
    room_.wait(lock, [&] {
      return stop_ || next_start_ >= num_batches_ || next_start_ < next_take_ + max_ahead_;
    });
    if (stop_ || next_start_ >= num_batches_) return;
    size_t b = next_start_++;
    lock.unlock();
    Result result;
    try {
      result.batch = load_(b);
    } catch (...) {
      result.error = std::current_exception();
    }
    lock.lock();
    if (result.error) stop_ = true;
    done_.emplace(b, std::move(result));
    ready_.notify_all();
  }
}

Example BatchPrefetcher::next() {
  std::unique_lock lock(mutex_);
  EMBER_CHECK(next_take_ < num_batches_, "[DataLoader] the epoch has no batch left (", num_batches_,
              " batches)");
  size_t b = next_take_;
  ready_.wait(lock, [&] { return done_.count(b) > 0 || (stop_ && b >= next_start_); });
  EMBER_CHECK(done_.count(b) > 0, "[DataLoader] batch ", b,
              " was not loaded: a worker failed on an earlier batch");
  Result result = std::move(done_.at(b));
  done_.erase(b);
  ++next_take_;
  lock.unlock();
  room_.notify_all();
  if (result.error) std::rethrow_exception(result.error);
  return std::move(result.batch);
}

}  // namespace ember::data::detail
