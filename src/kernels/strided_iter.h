// kernels/strided_iter.h: the iteration space of N strided operands of one shape, shared by the
// CPU loops (strides in bytes), the CUDA launchers and the reductions (strides in elements).
// Size-1 dims are dropped, a dim merges into the one outside it where every operand is contiguous
// across the two, broadcast (stride 0) dims stay apart from strided ones; the i-th element's
// offsets (row-major), contiguity checks, and the dense check of a single view.
#pragma once

#include <array>
#include <cstdint>

#include "ember/error.h"
#include "kernels/host_device.h"
#include "kernels/view.h"

#if defined(__CUDA_ARCH__)
#define EMBER_STRIDED_ITER_UNROLL _Pragma("unroll")
#else
#define EMBER_STRIDED_ITER_UNROLL
#endif

namespace ember::kernels {

// The unit of the strides a StridedIter holds: a kernel indexing typed pointers wants elements, a
// loop over char pointers of mixed dtypes wants bytes.
enum class StrideUnit { Elements, Bytes };

template <int N>
struct StridedIter {
  static_assert(N >= 1);
  int ndim = 0;
  int64_t numel = 1;
  // Only the first ndim entries are set and read; left uninitialised, not zeroed on every op.
  int64_t sizes[kMaxKernelDims];
  int64_t strides[N][kMaxKernelDims];

  // Appends a dim inside the ones pushed so far, with each operand's stride. Callers check that
  // at most kMaxKernelDims dims are pushed.
  EMBER_HOST_DEVICE void push(int64_t size, const int64_t (&s)[N]) {
    numel *= size;
    if (size == 1) return;
    bool merge = ndim > 0;
    for (int k = 0; k < N && merge; ++k) merge = strides[k][ndim - 1] == s[k] * size;
    if (merge) {
      sizes[ndim - 1] *= size;
      for (int k = 0; k < N; ++k) strides[k][ndim - 1] = s[k];
      return;
    }
    sizes[ndim] = size;
    for (int k = 0; k < N; ++k) strides[k][ndim] = s[k];
    ++ndim;
  }
  // One operand's push, written out without the loops over operands: the reductions build three
  // groups per op, and this keeps that setup small enough to inline into them.
  EMBER_HOST_DEVICE void push(int64_t size, int64_t stride) requires(N == 1) {
    numel *= size;
    if (size == 1) return;
    if (ndim > 0 && strides[0][ndim - 1] == stride * size) {
      sizes[ndim - 1] *= size;
      strides[0][ndim - 1] = stride;
      return;
    }
    sizes[ndim] = size;
    strides[0][ndim] = stride;
    ++ndim;
  }

  // Each operand's offset of element i, counting row-major over the merged dims.
  EMBER_HOST_DEVICE void offsets(int64_t i, int64_t (&off)[N]) const {
    EMBER_STRIDED_ITER_UNROLL
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d > 0; --d) {
      int64_t q = i / sizes[d], r = i - q * sizes[d];
      EMBER_STRIDED_ITER_UNROLL
      for (int k = 0; k < N; ++k) off[k] += r * strides[k][d];
      i = q;
    }
    if (ndim > 0) {
      EMBER_STRIDED_ITER_UNROLL
      for (int k = 0; k < N; ++k) off[k] += i * strides[k][0];
    }
  }
  // Operand k's offset of element i alone.
  EMBER_HOST_DEVICE int64_t offset(int64_t i, int k = 0) const {
    int64_t off = 0;
    for (int d = ndim - 1; d > 0; --d) {
      int64_t q = i / sizes[d];
      off += (i - q * sizes[d]) * strides[k][d];
      i = q;
    }
    return ndim > 0 ? off + i * strides[k][0] : off;
  }

  // Operand k's stride of merged dim d.
  EMBER_HOST_DEVICE int64_t stride(int d, int k = 0) const { return strides[k][d]; }

  // Whether operand k is contiguous: a single element, or one merged dim whose stride is unit
  // (1 for element strides, the element size for byte strides).
  EMBER_HOST_DEVICE bool contiguous(int k, int64_t unit = 1) const {
    return ndim == 0 || (ndim == 1 && strides[k][0] == unit);
  }
  // Whether every operand is contiguous, strides in elements.
  EMBER_HOST_DEVICE bool all_contiguous() const {
    for (int k = 0; k < N; ++k)
      if (!contiguous(k)) return false;
    return true;
  }
};

// The iteration space of N views of the first view's shape (the others' sizes are not read),
// strides in elements or bytes. who names the caller in the too-many-dims error ("[cpu]").
template <int N, StrideUnit unit = StrideUnit::Elements>
inline StridedIter<N> make_strided_iter(const std::array<const View*, N>& views, const char* who) {
  StridedIter<N> it;
  const View& first = *views[0];
  const int nd = static_cast<int>(first.sizes.size());
  EMBER_CHECK_KIND(Shape, nd <= kMaxKernelDims, who, " tensors with more than ", kMaxKernelDims,
                   " dims are not supported");
  int64_t scale[N];
  for (int k = 0; k < N; ++k)
    scale[k] = unit == StrideUnit::Bytes ? static_cast<int64_t>(element_size(views[k]->dtype)) : 1;
  for (int d = 0; d < nd; ++d) {
    int64_t s[N];
    for (int k = 0; k < N; ++k) s[k] = views[k]->strides[d] * scale[k];
    it.push(first.sizes[d], s);
  }
  return it;
}

// Whether v's elements lie densely in row-major order (size-1 dims may have any stride), checked
// without building a StridedIter: the test before a small op's single flat loop.
inline bool is_dense(const View& v) {
  int64_t expect = 1;
  for (size_t d = v.sizes.size(); d-- > 0;) {
    if (v.sizes[d] != 1 && v.strides[d] != expect) return false;
    expect *= v.sizes[d];
  }
  return true;
}

}  // namespace ember::kernels

#undef EMBER_STRIDED_ITER_UNROLL
