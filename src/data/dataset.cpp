// data/dataset.cpp: Dataset's default get_batch, TensorDataset and map (transformed datasets).
#include "ember/data/dataset.h"

#include <utility>

#include "ember/creation.h"
#include "ember/ops.h"

namespace ember::data {

namespace {

void check_index(const char* who, size_t index, size_t size) {
  EMBER_CHECK_KIND(Index, index < size, "[", who, "] index ", index,
                   " is out of range for a dataset of size ", size);
}

class MapDataset : public Dataset {
 public:
  MapDataset(std::shared_ptr<const Dataset> dataset, std::function<Example(Example)> fn)
      : dataset_(std::move(dataset)), fn_(std::move(fn)) {}
  size_t size() const override { return dataset_->size(); }
  Example get(size_t index) const override { return fn_(dataset_->get(index)); }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::function<Example(Example)> fn_;
};

}  // namespace

Example Dataset::get_batch(const std::vector<int64_t>& indices) const {
  EMBER_CHECK(!indices.empty(), "[Dataset::get_batch] expected at least one index");
  std::vector<Tensor> data, targets;
  data.reserve(indices.size());
  targets.reserve(indices.size());
  for (int64_t i : indices) {
    EMBER_CHECK_KIND(Index, i >= 0, "[Dataset::get_batch] index ", i, " is negative");
    Example e = get(static_cast<size_t>(i));
    data.push_back(std::move(e.data));
    targets.push_back(std::move(e.target));
  }
  return {stack(data), stack(targets)};
}

TensorDataset::TensorDataset(Tensor data, Tensor targets)
    : data_(std::move(data)), targets_(std::move(targets)) {
  EMBER_CHECK(data_.defined() && targets_.defined(),
              "[TensorDataset] data and targets must be defined tensors");
  EMBER_CHECK_KIND(Shape, data_.dim() > 0 && targets_.dim() > 0,
                   "[TensorDataset] data and targets need a first (example) dim, got shapes ",
                   shape_str(data_.sizes()), " and ", shape_str(targets_.sizes()));
  EMBER_CHECK_KIND(Shape, data_.size(0) == targets_.size(0),
                   "[TensorDataset] Size mismatch between tensors: data has ", data_.size(0),
                   " examples (shape ", shape_str(data_.sizes()), ") but targets has ",
                   targets_.size(0), " (shape ", shape_str(targets_.sizes()), ")");
}

size_t TensorDataset::size() const {
  return static_cast<size_t>(data_.size(0));
}

Example TensorDataset::get(size_t index) const {
  check_index("TensorDataset", index, size());
  auto i = static_cast<int64_t>(index);
  return {data_.select(0, i), targets_.select(0, i)};
}

Example TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  EMBER_CHECK(!indices.empty(), "[TensorDataset::get_batch] expected at least one index");
  Tensor index = from_vector(indices, std::nullopt, {.device = data_.device()});
  Tensor target_index = targets_.device() == data_.device() ? index : index.to(targets_.device());
  return {data_.index_select(0, index), targets_.index_select(0, target_index)};
}

std::shared_ptr<Dataset> map(std::shared_ptr<const Dataset> dataset,
                             std::function<Example(Example)> fn) {
  EMBER_CHECK(dataset != nullptr, "[data::map] the dataset is null");
  EMBER_CHECK(static_cast<bool>(fn), "[data::map] the function is empty");
  return std::make_shared<MapDataset>(std::move(dataset), std::move(fn));
}

}  // namespace ember::data
