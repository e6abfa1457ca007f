// data/dataloader.cpp: DataLoader -- an epoch's index order, its batches (loaded inline or by a
// BatchPrefetcher) and the iterator over them.
#include "ember/data/dataloader.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "core/pinned_memory.h"
#include "data/batch_prefetcher.h"
#include "ember/creation.h"

namespace ember::data {

namespace detail {

// One pass over the dataset: the order, the batch the iterator is on, and the workers.
class Epoch {
 public:
  Epoch(std::shared_ptr<const Dataset> dataset, const DataLoaderOptions& options,
        size_t num_batches, uint64_t epoch)
      : dataset_(std::move(dataset)), options_(options), num_batches_(num_batches) {
    auto n = static_cast<int64_t>(dataset_->size());
    if (options_.sampler) {
      order_ = options_.sampler->indices();
      for (int64_t i : order_)
        EMBER_CHECK_KIND(Index, i >= 0 && i < n, "[DataLoader] the sampler gave index ", i,
                         " for a dataset of ", n, " examples");
    } else if (options_.shuffle) {
      Generator gen(options_.seed);
      gen.set_offset(epoch * static_cast<uint64_t>(n));
      order_ = randperm(n, {}, &gen).to_vector<int64_t>();
    } else {
      order_.resize(static_cast<size_t>(n));
      std::iota(order_.begin(), order_.end(), int64_t{0});
    }
    if (options_.num_workers > 0 && num_batches_ > 0) {
      size_t ahead =
          static_cast<size_t>(options_.num_workers) * static_cast<size_t>(options_.prefetch_factor);
      prefetcher_ = std::make_unique<BatchPrefetcher>(num_batches_, options_.num_workers, ahead,
                                                      [this](size_t b) { return load(b); });
    }
    if (!done()) fetch();
  }

  bool done() const { return position_ >= num_batches_; }
  const Example& current() const {
    EMBER_CHECK(!done(), "[DataLoader] dereferencing an iterator past the last batch");
    return current_;
  }
  void advance() {
    EMBER_CHECK(!done(), "[DataLoader] incrementing an iterator past the last batch");
    ++position_;
    current_ = {};
    if (!done()) fetch();
  }

 private:
  // Batch b: get_batch over its run of the order, moved to the requested device.
  Example load(size_t b) const {
    size_t bs = static_cast<size_t>(options_.batch_size);
    size_t begin = b * bs, end = std::min(begin + bs, order_.size());
    std::vector<int64_t> indices(order_.begin() + static_cast<std::ptrdiff_t>(begin),
                                 order_.begin() + static_cast<std::ptrdiff_t>(end));
    Example batch = dataset_->get_batch(indices);
    if (options_.pin_memory && pinned_memory_available()) {  // ignored without a GPU, as PyTorch
      if (batch.data.defined() && batch.data.is_cpu()) batch.data = batch.data.pin_memory();
      if (batch.target.defined() && batch.target.is_cpu()) batch.target = batch.target.pin_memory();
    }
    if (options_.device) {
      if (batch.data.defined()) batch.data = batch.data.to(*options_.device, true);
      if (batch.target.defined()) batch.target = batch.target.to(*options_.device, true);
    }
    return batch;
  }
  // Loads the batch at position_; after a failure the epoch is over (the workers are stopped).
  void fetch() {
    try {
      current_ = prefetcher_ ? prefetcher_->next() : load(position_);
    } catch (...) {
      position_ = num_batches_;
      prefetcher_.reset();
      throw;
    }
  }

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  size_t num_batches_;
  std::vector<int64_t> order_;
  size_t position_ = 0;
  Example current_;
  std::unique_ptr<BatchPrefetcher> prefetcher_;  // last: its workers stop before the rest goes
};

}  // namespace detail

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  EMBER_CHECK(dataset_ != nullptr, "[DataLoader] the dataset is null");
  EMBER_CHECK(options_.batch_size > 0, "[DataLoader] batch_size should be a positive integer, got ",
              options_.batch_size);
  EMBER_CHECK(options_.num_workers >= 0,
              "[DataLoader] num_workers option should be non-negative, got ", options_.num_workers);
  EMBER_CHECK(options_.prefetch_factor > 0,
              "[DataLoader] prefetch_factor should be a positive integer, got ",
              options_.prefetch_factor);
  EMBER_CHECK(!(options_.sampler && options_.shuffle),
              "[DataLoader] sampler option is mutually exclusive with shuffle; shuffle in the "
              "sampler (DistributedSampler shuffles by default)");
  if (options_.device) options_.device = resolve_device(*options_.device);
}

size_t DataLoader::size() const {
  size_t n = options_.sampler ? options_.sampler->size() : dataset_->size();
  size_t bs = static_cast<size_t>(options_.batch_size);
  return options_.drop_last ? n / bs : (n + bs - 1) / bs;
}

DataLoader::Iterator DataLoader::begin() {
  uint64_t epoch = epoch_++;
  return Iterator(std::make_shared<detail::Epoch>(dataset_, options_, size(), epoch));
}

const Example& DataLoader::Iterator::operator*() const {
  EMBER_CHECK(epoch_ != nullptr, "[DataLoader] dereferencing the end iterator");
  return epoch_->current();
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  EMBER_CHECK(epoch_ != nullptr, "[DataLoader] incrementing the end iterator");
  epoch_->advance();
  return *this;
}

bool DataLoader::Iterator::at_end() const {
  return epoch_ == nullptr || epoch_->done();
}

}  // namespace ember::data
