// kernels/reduce_common.h: what the CPU and CUDA reductions share, usable on host and device --
// groups of dims (kept or reduced) merged where contiguous, and Sum, Prod, Max and Min as an
// accumulator type, identity, step and merge with PyTorch's NaN and integer-overflow rules.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/error.h"
#include "kernels/op_params.h"
#include "kernels/scalar_math.h"
#include "kernels/strided_iter.h"
#include "kernels/view.h"

namespace ember::reduce_detail {

// One group of dims (kept or reduced), merged where contiguous; strides in elements.
using DimGroup = kernels::StridedIter<1>;

// A reduction's dims: src's kept dims, the same dims of dst, and src's reduced dims (bit d of
// mask set).
struct ReduceDims {
  DimGroup kept, out, reduced;
};

inline ReduceDims split_reduce_dims(const View& dst, const View& src, uint64_t mask) {
  int nd = static_cast<int>(src.sizes.size());
  EMBER_CHECK_KIND(Shape, nd <= kMaxKernelDims, "[reduce] tensors with more than ", kMaxKernelDims,
                   " dims are not supported");
  ReduceDims g;
  for (int d = 0; d < nd; ++d) {
    if (mask >> d & 1) {
      g.reduced.push(src.sizes[d], src.strides[d]);
    } else {
      g.kept.push(src.sizes[d], src.strides[d]);
      g.out.push(dst.sizes[d], dst.strides[d]);
    }
  }
  return g;
}

template <class T>
EMBER_HOST_DEVICE constexpr bool is_nan(T v) {
  if constexpr (is_float_v<T>)
    return v != v;
  else
    return false;
}

// Floating sums and products accumulate in float64; integers wrap around as in PyTorch; Max and
// Min propagate NaN. Elements are taken as their compute type V (opmath_t: float for the 16-bit
// floating types), so a Half sum accumulates in float64 and a Half max compares floats.
template <ReduceOp op, class T>
struct Reducer {
  using V = opmath_t<T>;
  using Acc = std::conditional_t<
      (op == ReduceOp::Sum || op == ReduceOp::Prod) && std::is_floating_point_v<V>, double, V>;
  EMBER_HOST_DEVICE static Acc identity() {
    if constexpr (op == ReduceOp::Sum)
      return Acc(0);
    else if constexpr (op == ReduceOp::Prod)
      return Acc(1);
    else if constexpr (op == ReduceOp::Max)
      return std::is_floating_point_v<V> ? -std::numeric_limits<V>::infinity()
                                         : std::numeric_limits<V>::lowest();
    else
      return std::is_floating_point_v<V> ? std::numeric_limits<V>::infinity()
                                         : std::numeric_limits<V>::max();
  }
  EMBER_HOST_DEVICE static Acc step(Acc acc, V v) {
    if constexpr (op == ReduceOp::Sum) {
      if constexpr (std::is_same_v<V, bool>)
        return acc || v;
      else if constexpr (std::is_integral_v<V>)
        return math::wrap_add(acc, v);
      else
        return acc + v;
    } else if constexpr (op == ReduceOp::Prod) {
      if constexpr (std::is_same_v<V, bool>)
        return acc && v;
      else if constexpr (std::is_integral_v<V>)
        return math::wrap_mul(acc, v);
      else
        return acc * v;
    } else if constexpr (op == ReduceOp::Max) {
      return (is_nan(acc) || v > acc || is_nan(v)) ? (is_nan(acc) ? acc : v) : acc;
    } else {
      return (is_nan(acc) || v < acc || is_nan(v)) ? (is_nan(acc) ? acc : v) : acc;
    }
  }
  EMBER_HOST_DEVICE static Acc merge(Acc a, Acc b) {
    if constexpr (std::is_floating_point_v<V> && op == ReduceOp::Sum)
      return a + b;
    else if constexpr (std::is_floating_point_v<V> && op == ReduceOp::Prod)
      return a * b;
    else
      return step(a, static_cast<V>(b));
  }
};

}  // namespace ember::reduce_detail
