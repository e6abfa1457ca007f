// data/sampler.cpp: DistributedSampler's index lists and PyTorch's CPU randperm.
#include "ember/data/sampler.h"

#include <numeric>
#include <random>

#include "ember/distributed.h"
#include "ember/error.h"

namespace ember::data {

std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed) {
  EMBER_CHECK(n >= 0, "[randperm] n must be non-negative, got ", n);
  EMBER_CHECK(n < int64_t{0xffffffff} / 20, "[randperm] n = ", n,
              " is beyond the sizes whose PyTorch permutation is reproduced here (< 2^32 / 20)");
  std::vector<int64_t> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), int64_t{0});
  // torch.Generator.manual_seed keeps the low 32 bits for its mt19937.
  std::mt19937 engine(static_cast<uint32_t>(seed & 0xffffffffu));
  for (int64_t i = 0; i + 1 < n; ++i) {
    int64_t z = static_cast<int64_t>(engine()) % (n - i);
    std::swap(r[static_cast<size_t>(i)], r[static_cast<size_t>(z + i)]);
  }
  return r;
}

namespace {

int from_group(int given, bool rank) {
  if (given >= 0) return given;
  EMBER_CHECK(distributed::is_initialized(), "[DistributedSampler] ",
              rank ? "rank" : "num_replicas",
              " was not given and the default process group is not initialized; pass it, or "
              "call ember::distributed::init_process_group() first");
  return rank ? distributed::get_rank() : distributed::get_world_size();
}

}  // namespace

DistributedSampler::DistributedSampler(size_t dataset_size, int num_replicas, int rank,
                                       bool shuffle, uint64_t seed, bool drop_last)
    : dataset_size_(dataset_size),
      num_replicas_(from_group(num_replicas, false)),
      rank_(from_group(rank, true)),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  EMBER_CHECK(num_replicas_ >= 1, "[DistributedSampler] num_replicas must be at least 1, got ",
              num_replicas_);
  EMBER_CHECK(rank_ < num_replicas_, "[DistributedSampler] Invalid rank ", rank_,
              ", rank should be in the interval [0, ", num_replicas_ - 1, "]");
  auto n = dataset_size_, r = static_cast<size_t>(num_replicas_);
  // PyTorch: with drop_last and an uneven split, ceil((N - R) / R) = floor(N / R).
  num_samples_ = drop_last_ && n % r != 0 ? n / r : (n + r - 1) / r;
}

std::vector<int64_t> DistributedSampler::indices() const {
  auto n = static_cast<int64_t>(dataset_size_);
  std::vector<int64_t> order;
  if (shuffle_) {
    order = torch_randperm(n, seed_ + epoch_);
  } else {
    order.resize(dataset_size_);
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  const size_t total = total_size();
  if (order.size() < total) {
    EMBER_CHECK(!order.empty(), "[DistributedSampler] cannot pad an empty dataset to ", total,
                " indices");
    // Repeat the order from its start until every rank has num_samples indices.
    for (size_t i = 0; order.size() < total; ++i) order.push_back(order[i]);
  }
  order.resize(total);
  std::vector<int64_t> mine;
  mine.reserve(num_samples_);
  for (size_t i = static_cast<size_t>(rank_); i < total; i += static_cast<size_t>(num_replicas_))
    mine.push_back(order[i]);
  return mine;
}

}  // namespace ember::data
