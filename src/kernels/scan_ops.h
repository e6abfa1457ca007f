// kernels/scan_ops.h: the combine rules of the scans along a dim (cumsum, cumprod, cummax,
// cummin, logcumsumexp) on an element type's accumulator, shared by the CPU and CUDA kernels so
// both scan alike: floating types accumulate in double (exact for max and min), integers wrap
// as their fixed width does, cummax/cummin move to a later equal element (PyTorch's `>=`) and
// to every NaN. Host and device.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "ember/half.h"
#include "kernels/host_device.h"
#include "kernels/op_params.h"

namespace ember::kernels {

// The accumulator of T: double for the floating types, int for bool, T for integers.
template <class T>
using scan_acc_t =
    std::conditional_t<is_float_v<T>, double, std::conditional_t<std::is_same_v<T, bool>, int, T>>;

template <class A>
EMBER_HOST_DEVICE inline A scan_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <class A>
EMBER_HOST_DEVICE inline A scan_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// log(exp(a) + exp(b)) without overflow; -inf with -inf is -inf, NaN stays NaN.
EMBER_HOST_DEVICE inline double scan_log_add_exp(double a, double b) {
  if (a != a || b != b) return a + b;
  const double m = a > b ? a : b;
  if (m == -std::numeric_limits<double>::infinity() || m == std::numeric_limits<double>::infinity())
    return m;
  return m + log1p(exp(-fabs(a - b)));
}

// acc combined with the next element x (Sum, Prod, LogSumExp; Max and Min keep an index too and
// are scanned by the backends' own loops). No default: a new ScanOp is a -Wswitch warning here.
template <class A>
EMBER_HOST_DEVICE inline A scan_combine(ScanOp op, A acc, A x) {
  switch (op) {
    case ScanOp::Sum:
      return scan_add(acc, x);
    case ScanOp::Prod:
      return scan_mul(acc, x);
    case ScanOp::LogSumExp:
      if constexpr (std::is_floating_point_v<A>) return scan_log_add_exp(acc, x);
      return acc;
    case ScanOp::Max:
    case ScanOp::Min:
      break;
  }
  return acc;
}

template <class A>
EMBER_HOST_DEVICE inline A scan_identity(ScanOp op) {
  if (op == ScanOp::Prod) return A(1);
  if constexpr (std::is_floating_point_v<A>)
    if (op == ScanOp::LogSumExp) return -std::numeric_limits<A>::infinity();
  return A(0);
}

// Whether x (the later element) replaces the running max (or min) `best`.
template <class A>
EMBER_HOST_DEVICE inline bool scan_takes(bool max, A best, A x) {
  if constexpr (std::is_floating_point_v<A>) {
    if (x != x) return true;
    if (best != best) return false;
  }
  return max ? x >= best : x <= best;
}

}  // namespace ember::kernels
