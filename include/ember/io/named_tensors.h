// ember/io/named_tensors.h: the (name, tensor) list every checkpoint and archive format reads and
// writes, in file order.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ember/tensor.h"

namespace ember::io {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

}  // namespace ember::io
