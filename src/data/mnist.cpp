// data/mnist.cpp: the MNIST dataset -- one split's images and labels, batches by index_select.
#include "ember/data/mnist.h"

#include <filesystem>

#include "data/idx_file.h"
#include "ember/creation.h"
#include "ember/ops.h"

namespace ember::data {

namespace {

// torchvision's ToTensor: uint8 pixels to float32 in [0, 1].
Tensor to_unit_float(const Tensor& pixels) {
  return pixels.to(kFloat32).div_(255);
}

}  // namespace

MNIST::MNIST(const std::string& root, Split split) {
  namespace fs = std::filesystem;
  const char* prefix = split == Split::Train ? "train" : "t10k";
  auto path = [&](const char* kind) {
    return (fs::path(root) / (std::string(prefix) + "-" + kind + "-ubyte")).string();
  };
  detail::IdxFile images = detail::read_idx_ubyte(path("images-idx3"), 3, "MNIST");
  detail::IdxFile labels = detail::read_idx_ubyte(path("labels-idx1"), 1, "MNIST");
  EMBER_CHECK_KIND(IO, images.data.size(0) == labels.data.size(0),
                   "[MNIST] count mismatch: ", images.path, " has ", images.data.size(0),
                   " images but ", labels.path, " has ", labels.data.size(0), " labels");
  images_ = std::move(images.data);
  targets_ = labels.data.to(kInt64);
}

size_t MNIST::size() const {
  return static_cast<size_t>(images_.size(0));
}

Example MNIST::get(size_t index) const {
  EMBER_CHECK_KIND(Index, index < size(), "[MNIST] index ", index,
                   " is out of range for a dataset of size ", size());
  auto i = static_cast<int64_t>(index);
  return {to_unit_float(images_.select(0, i).unsqueeze(0)), targets_.select(0, i).clone()};
}

Example MNIST::get_batch(const std::vector<int64_t>& indices) const {
  EMBER_CHECK(!indices.empty(), "[MNIST::get_batch] expected at least one index");
  Tensor index = from_vector(indices);
  return {to_unit_float(images_.index_select(0, index).unsqueeze(1)),
          targets_.index_select(0, index)};
}

const Tensor& MNIST::images() const {
  return images_;
}
const Tensor& MNIST::targets() const {
  return targets_;
}

}  // namespace ember::data
