// core/make_tensor.h: allocating new tensors and views inside the library (no checks, no copies).
#pragma once

#include "ember/tensor.h"

namespace ember {

// A new contiguous tensor on `device`, which must already be resolved (resolve_device).
Tensor make_tensor(const Shape& sizes, DType dtype, Device device);
// A view of base's storage with other sizes, strides and offset.
Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset);
// The device all `tensors` are on; throws PyTorch's same-device error naming `op` otherwise.
Device common_device(const char* op, std::initializer_list<const Tensor*> tensors);

}  // namespace ember
