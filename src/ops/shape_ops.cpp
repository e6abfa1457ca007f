// ops/shape_ops.cpp: tril, triu, flip, roll, repeat and tile, composed of views, where,
// index_select and cat (so every device and autograd come with them).
#include <algorithm>

#include "ops/op_helpers.h"

namespace ember {

namespace {

// x: (..., n, m) with the elements off the kept triangle zeroed: below (and on) `diagonal` for
// tril, above (and on) it for triu.
Tensor triangle(const char* op, const Tensor& x, int64_t diagonal, bool lower) {
  EMBER_CHECK_KIND(Shape, x.dim() >= 2, "[", op,
                   "] input tensor must have at least 2 dimensions, got ", x.dim(), "-D ",
                   shape_str(x.sizes()));
  TensorOptions o{.dtype = kInt64, .device = x.device()};
  Tensor offset = arange(x.size(-1), o).unsqueeze(0) - arange(x.size(-2), o).unsqueeze(1);
  Tensor keep = lower ? offset <= diagonal : offset >= diagonal;
  return where(keep, x, zeros({}, {.dtype = x.dtype(), .device = x.device()}));
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  return triangle("tril", x, diagonal, true);
}
Tensor triu(const Tensor& x, int64_t diagonal) {
  return triangle("triu", x, diagonal, false);
}

Tensor flip(const Tensor& x, const Shape& dims) {
  uint64_t seen = 0;
  Tensor out = x;
  for (int64_t d0 : dims) {
    int64_t d = wrap_dim("flip", d0, std::max<int64_t>(x.dim(), 1));
    EMBER_CHECK_KIND(Shape, !(seen >> d & 1), "[flip] dim ", d, " appears multiple times in dims ",
                     shape_str(dims));
    seen |= uint64_t{1} << d;
    if (x.dim() == 0 || x.size(d) <= 1) continue;
    int64_t n = x.size(d);
    Tensor reversed = (n - 1) - arange(n, {.dtype = kInt64, .device = x.device()});
    out = index_select(out, d, reversed);
  }
  return out.is_same(x) ? x.clone() : out;
}

Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims) {
  if (dims.empty()) {
    EMBER_CHECK_KIND(Shape, shifts.size() == 1,
                     "[roll] without dims, shifts must have one "
                     "element (the flattened tensor is rolled), got ",
                     shape_str(shifts));
    return roll(x.flatten(), shifts, {0}).view(x.sizes());
  }
  EMBER_CHECK_KIND(Shape, shifts.size() == dims.size(),
                   "[roll] shifts and dimensions must align. "
                   "shifts: ",
                   shifts.size(), ", dims: ", dims.size());
  Tensor out = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim("roll", dims[i], x.dim());
    int64_t n = x.size(d);
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    out = cat({out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);
  }
  return out.is_same(x) ? x.clone() : out;
}

Tensor repeat(const Tensor& x, const Shape& repeats) {
  EMBER_CHECK_KIND(Shape, static_cast<int64_t>(repeats.size()) >= x.dim(),
                   "[repeat] Number of dimensions of repeat dims ", shape_str(repeats),
                   " can not be smaller than number of dimensions of tensor ",
                   shape_str(x.sizes()));
  for (int64_t r : repeats)
    EMBER_CHECK_KIND(Value, r >= 0, "[repeat] Trying to create tensor with negative dimension ", r,
                     ": ", shape_str(repeats));
  // (s0, s1, ...) viewed as (1, s0, 1, s1, ...), expanded to (r0, s0, r1, s1, ...), flattened
  // pairwise to (r0 s0, r1 s1, ...).
  Shape padded(repeats.size() - static_cast<size_t>(x.dim()), 1);
  padded.insert(padded.end(), x.sizes().begin(), x.sizes().end());
  Shape split, expanded, out;
  for (size_t i = 0; i < repeats.size(); ++i) {
    split.insert(split.end(), {1, padded[i]});
    expanded.insert(expanded.end(), {repeats[i], padded[i]});
    out.push_back(repeats[i] * padded[i]);
  }
  return x.reshape(split).expand(expanded).reshape(out);
}

Tensor tile(const Tensor& x, const Shape& dims) {
  Shape r(static_cast<size_t>(std::max<int64_t>(x.dim() - static_cast<int64_t>(dims.size()), 0)),
          1);
  r.insert(r.end(), dims.begin(), dims.end());
  return repeat(x, r);
}

}  // namespace ember
