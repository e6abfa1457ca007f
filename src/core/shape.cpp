// core/shape.cpp: shape and stride arithmetic.
#include "core/shape.h"

#include <string>

namespace ember {

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

int64_t shape_numel(const Shape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

int64_t wrap_dim_slow(const char* op, int64_t dim, int64_t ndim) {
  int64_t lo = ndim > 0 ? -ndim : -1, hi = ndim > 0 ? ndim - 1 : 0;
  EMBER_CHECK_KIND(Index, dim >= lo && dim <= hi, "[", op,
                   "] Dimension out of range (expected to be in range of [", lo, ", ", hi,
                   "], but got ", dim, ")");
  return dim < 0 ? dim + (ndim > 0 ? ndim : 1) : dim;
}

Shape infer_size(const char* op, const Shape& shape, int64_t numel) {
  Shape out = shape;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK_KIND(Shape, infer < 0, "[", op, "] only one dimension can be inferred, got ",
                       shape_str(shape));
      infer = static_cast<int>(i);
    } else {
      EMBER_CHECK_KIND(Shape, shape[i] >= 0, "[", op, "] invalid shape dimension ", shape[i],
                       " in ", shape_str(shape));
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    EMBER_CHECK_KIND(Shape, known != 0 && numel % known == 0, "[", op, "] shape ", shape_str(shape),
                     " is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    EMBER_CHECK_KIND(Shape, known == numel, "[", op, "] shape ", shape_str(shape),
                     " is invalid for input of size ", numel);
  }
  return out;
}

Shape broadcast_shape(const char* op, const Shape& a, const Shape& b) {
  if (a == b) return a;
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK_KIND(Shape, da == db || da == 1 || db == 1, "[", op, "] The size of tensor a (", da,
                     ") must match the size of tensor b (", db, ") at non-singleton dimension ", i,
                     "; shapes ", shape_str(a), " and ", shape_str(b),
                     " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Tensor& t, const Shape& target) {
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  size_t lead = target.size() - sizes.size();
  Shape out(target.size(), 0);
  for (size_t i = 0; i < sizes.size(); ++i)
    out[lead + i] = sizes[i] == target[lead + i] ? strides[i] : 0;
  return out;
}

std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides,
                                  const Shape& new_sizes) {
  Shape out(new_sizes.size());
  if (sizes.empty()) {
    for (auto& s : out) s = 1;
    return out;
  }
  if (shape_numel(sizes) == 0) return contiguous_strides(new_sizes);
  // Walk chunks of old dims that are contiguous with each other, matching new dims to them.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

bool is_contiguous(const Shape& sizes, const Shape& strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (sizes[i] == 0) return true;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

uint64_t dims_mask(const char* op, const Shape& dims, int64_t ndim) {
  if (dims.empty()) return ndim >= 64 ? ~0ULL : (1ULL << ndim) - 1;
  uint64_t mask = 0;
  for (int64_t d : dims) {
    int64_t w = wrap_dim(op, d, ndim);
    if (ndim == 0) continue;
    EMBER_CHECK_KIND(Index, !(mask >> w & 1), "[", op, "] dim ", w,
                     " appears multiple times in the list of dims");
    mask |= 1ULL << w;
  }
  return mask;
}

}  // namespace ember
