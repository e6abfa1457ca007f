// ember/data/sampler.h: samplers -- the indices one epoch of a DataLoader visits, in the shape of
// torch.utils.data.Sampler -- and DistributedSampler, the share of a dataset one rank of a
// data-parallel job visits, with exactly PyTorch's index lists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The indices of the epoch about to start, in visiting order (torch's __iter__); a DataLoader
  // given this sampler asks for them when each epoch begins.
  virtual std::vector<int64_t> indices() const = 0;
  virtual size_t size() const = 0;  // how many indices() returns (__len__)
};

// torch.utils.data.distributed.DistributedSampler: rank `rank` of `num_replicas` visits every
// num_replicas-th index of the epoch's order, starting at its rank. The order is 0..N-1, or with
// shuffle a permutation drawn as torch.randperm(N) draws it from a torch.Generator seeded with
// seed + epoch, so the lists are PyTorch's own. Without drop_last the order is padded by repeating
// it from the start until every rank has ceil(N / num_replicas) indices; with drop_last its tail
// is cut so that every rank has floor(N / num_replicas). num_replicas and rank default (-1) to
// the default process group's world size and rank (init_process_group first).
class DistributedSampler : public Sampler {
 public:
  explicit DistributedSampler(size_t dataset_size, int num_replicas = -1, int rank = -1,
                              bool shuffle = true, uint64_t seed = 0, bool drop_last = false);
  // Call before each epoch when shuffling (as in PyTorch), or every epoch repeats epoch 0's order.
  void set_epoch(uint64_t epoch) { epoch_ = epoch; }
  uint64_t epoch() const { return epoch_; }
  std::vector<int64_t> indices() const override;
  size_t size() const override { return num_samples_; }
  size_t total_size() const { return num_samples_ * static_cast<size_t>(num_replicas_); }
  int num_replicas() const { return num_replicas_; }
  int rank() const { return rank_; }

 private:
  size_t dataset_size_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  size_t num_samples_;
  uint64_t epoch_ = 0;
};

// torch.randperm(n, generator=torch.Generator().manual_seed(seed)) on the CPU: Fisher-Yates swaps
// drawn from the 32-bit Mersenne Twister PyTorch's CPU generator is (for n < 2^32 / 20).
std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed);

}  // namespace ember::data
