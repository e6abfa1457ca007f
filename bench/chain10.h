// bench/chain10.h: the chain of ten tiny element-wise ops both benchmark programs time, written
// once for ember and LibTorch tensors alike (b >= 1, so / is safe).
#pragma once

namespace ember_bench {

template <class T>
T chain10(const T& a, const T& b) {
  T y = a + b;
  y = y * b;
  y = y - a;
  y = y / b;
  y = y.relu();
  y = y.exp();
  y = y.neg();
  y = y.abs();
  y = y.sqrt();
  return y.sigmoid();
}

}  // namespace ember_bench
