// ember/data/mnist.h: the MNIST and Fashion-MNIST datasets, read from their IDX files.
#pragma once

#include <string>
#include <vector>

#include "ember/data/dataset.h"

namespace ember::data {

// MNIST-format IDX files (also Fashion-MNIST): root/{train,t10k}-{images-idx3,labels-idx1}-ubyte,
// gzip (.gz) or not. The constructor reads both files of the split and checks them (magic
// numbers, sizes against the header, image and label counts); any problem is an Error of kind IO
// naming the file.
class MNIST : public Dataset {
 public:
  enum class Split { Train, Test };
  MNIST(const std::string& root, Split split);
  size_t size() const override;
  Example get(
      size_t index) const override;  // data: float32 (1, 28, 28) in [0, 1]; target: int64 0-dim
  Example get_batch(
      const std::vector<int64_t>& indices) const override;  // (B, 1, 28, 28) float32, (B) int64
  const Tensor& images() const;                             // (N, 28, 28) uint8
  const Tensor& targets() const;                            // (N) int64

 private:
  Tensor images_, targets_;
};

// Where Debian's dataset-fashion-mnist package puts the Fashion-MNIST files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

}  // namespace ember::data
