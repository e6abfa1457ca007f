// data/batch_prefetcher.h: worker threads computing batches 0..n-1 ahead of a consumer, who
// receives them in order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "ember/data/dataset.h"

namespace ember::data::detail {

class BatchPrefetcher {
 public:
  using LoadFn = std::function<Example(size_t)>;
  // Starts num_workers threads running load(b) for b = 0, 1, ... num_batches - 1, never more
  // than max_ahead batches past the one the consumer takes next. load must be thread-safe.
  BatchPrefetcher(size_t num_batches, int num_workers, size_t max_ahead, LoadFn load);
  // Stops the workers (each finishes the batch it is loading) and joins them.
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // The next batch in order, waiting for it; rethrows the exception its load threw. Call at most
  // num_batches times.
  Example next();

 private:
  struct Result {
    Example batch;
    std::exception_ptr error;
  };
  void work();
  void stop_and_join();

  const size_t num_batches_, max_ahead_;
  const LoadFn load_;
  std::mutex mutex_;
  std::condition_variable ready_;  // a batch finished (consumer waits)
  std::condition_variable room_;   // the consumer took one, or stop (workers wait)
  std::map<size_t, Result> done_;  // finished batches not yet taken
  size_t next_start_ = 0;          // the next batch a worker takes up
  size_t next_take_ = 0;           // the next batch the consumer takes
  bool stop_ = false;              // destruction, or a load failed: start nothing more
  std::vector<std::thread> threads_;
};

}  // namespace ember::data::detail
