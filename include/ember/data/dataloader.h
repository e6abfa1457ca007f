// ember/data/dataloader.h: batches from a dataset, shuffled per epoch and prepared ahead on worker
// threads, in the shape of torch.utils.data.DataLoader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>

#include "ember/data/dataset.h"
#include "ember/data/sampler.h"
#include "ember/device.h"

namespace ember::data {

struct DataLoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;
  uint64_t seed = 0;
  bool drop_last = false;
  int num_workers = 0;      // background threads preparing batches ahead
  bool pin_memory = false;  // batches in pinned memory (when a GPU is present), copied async
  std::optional<Device> device = std::nullopt;  // batches are moved there (non_blocking)
  int prefetch_factor = 2;                      // batches prepared ahead per worker
  // Where each epoch's indices come from (a DistributedSampler, say) instead of 0..N-1 or the
  // shuffle; mutually exclusive with shuffle, as in PyTorch.
  std::shared_ptr<const Sampler> sampler = nullptr;
};

namespace detail {
class Epoch;
}

// Iterating a DataLoader runs one epoch: batches of get_batch over consecutive runs of indices
// (0..N-1, a permutation when shuffling, or the sampler's), always in order whatever num_workers. A
// worker's exception comes out of the iterator's ++ (or begin()); leaving the loop early stops the
// workers.
class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});
  size_t size() const;  // batches per epoch (of the sampler's indices when there is one)
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }
  // The epoch the next begin() starts (0 at first); set it to repeat or skip epochs' orders.
  uint64_t epoch() const { return epoch_; }
  void set_epoch(uint64_t epoch) { epoch_ = epoch; }

  // An input iterator yielding `const Example&` batches; range-for works. Copies share the
  // epoch; the batch they refer to stays valid until the next ++.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Example;
    using difference_type = std::ptrdiff_t;
    using pointer = const Example*;
    using reference = const Example&;

    Iterator() = default;
    const Example& operator*() const;
    const Example* operator->() const { return &**this; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    bool operator==(const Iterator& other) const { return at_end() == other.at_end(); }

   private:
    friend class DataLoader;
    explicit Iterator(std::shared_ptr<detail::Epoch> epoch) : epoch_(std::move(epoch)) {}
    bool at_end() const;
    std::shared_ptr<detail::Epoch> epoch_;  // null for end()
  };

  // Starts an epoch: epoch k (k = 0, 1, ...) shuffles with randperm seeded by (seed, k): a
  // Generator(seed) at Philox offset k * N, as if one generator drew every epoch's permutation.
  Iterator begin();
  Iterator end() { return Iterator(); }

 private:
  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  uint64_t epoch_ = 0;
};

}  // namespace ember::data
