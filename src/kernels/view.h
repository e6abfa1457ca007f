// kernels/view.h: a strided view as kernels see it (data pointer, sizes, strides, dtype).
#pragma once

#include <cstdint>
#include <span>

#include "ember/dtype.h"

namespace ember {

// The most dims a kernel handles (after size-1 dims are dropped and contiguous ones merged).
inline constexpr int kMaxKernelDims = 25;

// A strided view handed to kernels. Strides are in elements; a stride of 0 broadcasts.
struct View {
  void* data;
  std::span<const int64_t> sizes;
  std::span<const int64_t> strides;
  DType dtype;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
};

}  // namespace ember
