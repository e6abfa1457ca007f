// ember/data/dataset.h: datasets -- indexable collections of (data, target) examples -- in the
// shape of torch.utils.data.Dataset, with TensorDataset and a transform wrapper (map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ember/tensor.h"

namespace ember::data {

// One example, or a batch of them (stacked along a new leading dim).
struct Example {
  Tensor data;
  Tensor target;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t size() const = 0;
  // Throws an Error of kind Index when index >= size().
  virtual Example get(size_t index) const = 0;
  // A whole batch; the default stacks get(i). Datasets backed by big tensors override it with
  // index_select. get and get_batch may be called from several threads at once (DataLoader
  // workers), so implementations must not change shared state.
  virtual Example get_batch(const std::vector<int64_t>& indices) const;
};

// Examples are slices along the first dim of two tensors (torch.utils.data.TensorDataset).
class TensorDataset : public Dataset {
 public:
  // data: (N, ...), targets: (N, ...); throws an Error of kind Shape when the first dims differ.
  TensorDataset(Tensor data, Tensor targets);
  size_t size() const override;
  Example get(size_t index) const override;                               // views of row `index`
  Example get_batch(const std::vector<int64_t>& indices) const override;  // one index_select each
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_, targets_;
};

// A dataset whose examples pass through fn (torchvision-style transform). fn runs once per
// example, also inside get_batch (which stacks the transformed examples).
std::shared_ptr<Dataset> map(std::shared_ptr<const Dataset> dataset,
                             std::function<Example(Example)> fn);

}  // namespace ember::data
