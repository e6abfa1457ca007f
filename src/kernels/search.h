// kernels/search.h: the binary search of searchsorted and bucketize on one sorted row, host and
// device: the first position whose element is >= v (right: > v), compared in the compute type,
// written as PyTorch's `!(mid >= v)` so that a NaN value lands past the end.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace ember::kernels {

template <class A, class T>
EMBER_HOST_DEVICE inline int64_t search_row(const T* row, int64_t m, A v, bool right) {
  int64_t lo = 0, hi = m;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const A e = static_cast<A>(row[mid]);
    if (right ? !(e > v) : !(e >= v))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace ember::kernels
