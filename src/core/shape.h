// core/shape.h: shape and stride arithmetic shared by every op -- dims, broadcasting, views.
#pragma once

#include <optional>

#include "ember/tensor.h"

namespace ember {

Shape contiguous_strides(const Shape& sizes);
int64_t shape_numel(const Shape& sizes);
// wrap_dim's rare cases: 0-dim tensors (dims 0 and -1 mean the scalar itself) and errors.
int64_t wrap_dim_slow(const char* op, int64_t dim, int64_t ndim);
// Wraps a possibly negative dim into [0, ndim); throws PyTorch's "Dimension out of range".
inline int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim) {
  if (dim >= 0 && dim < ndim) return dim;
  if (dim < 0 && dim >= -ndim) return dim + ndim;
  return wrap_dim_slow(op, dim, ndim);
}
// Replaces one -1 in `shape` so that it holds `numel` elements; throws when impossible.
Shape infer_size(const char* op, const Shape& shape, int64_t numel);
// The broadcast shape of a and b, or an Error naming op and both shapes.
Shape broadcast_shape(const char* op, const Shape& a, const Shape& b);
// Strides that read `t` as if expanded to `target` (0 strides on broadcast dims).
Shape broadcast_strides(const Tensor& t, const Shape& target);
// Strides for viewing (sizes, strides) as new_sizes without copying, if possible.
std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides, const Shape& new_sizes);
bool is_contiguous(const Shape& sizes, const Shape& strides);
// Bitmask of the dims in `dims` (all dims when empty), wrapped; throws on repeats.
uint64_t dims_mask(const char* op, const Shape& dims, int64_t ndim);

}  // namespace ember
