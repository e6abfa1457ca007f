// ops/shape_ops.cpp: tril, triu, flip, roll, repeat, tile, movedim, swapaxes, unflatten and
// take_along_dim, composed of views, where, index_select, gather and cat (so every device and
// autograd come with them).
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

Tensor movedim(const Tensor& x, const Shape& source, const Shape& destination) {
  EMBER_CHECK_KIND(Shape, source.size() == destination.size(),
                   "[movedim] Invalid source or destination dims: source (", shape_str(source),
                   ") and destination (", shape_str(destination),
                   ") must have the same number of elements");
  const int64_t n = x.dim();
  Shape perm(static_cast<size_t>(n), -1);
  uint64_t used_src = 0, used_dst = 0;
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = wrap_dim("movedim", source[i], n), d = wrap_dim("movedim", destination[i], n);
    EMBER_CHECK_KIND(Shape, !(used_src >> s & 1) && !(used_dst >> d & 1),
                     "[movedim] repeated dim in source ", shape_str(source), " or destination ",
                     shape_str(destination));
    used_src |= uint64_t{1} << s;
    used_dst |= uint64_t{1} << d;
    perm[static_cast<size_t>(d)] = s;
  }
  // The other dims keep their order in the free places.
  int64_t next = 0;
  for (int64_t& p : perm) {
    if (p != -1) continue;
    while (used_src >> next & 1) ++next;
    p = next++;
  }
  return x.permute(perm);
}
Tensor movedim(const Tensor& x, int64_t source, int64_t destination) {
  return movedim(x, Shape{source}, Shape{destination});
}
Tensor swapaxes(const Tensor& x, int64_t axis0, int64_t axis1) {
  return x.transpose(axis0, axis1);
}
Tensor swapdims(const Tensor& x, int64_t dim0, int64_t dim1) {
  return x.transpose(dim0, dim1);
}

Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes) {
  int64_t d = wrap_dim("unflatten", dim, x.dim());
  EMBER_CHECK_KIND(Shape, !sizes.empty(), "[unflatten] sizes must be non-empty");
  Shape shape(x.sizes().begin(), x.sizes().begin() + d);
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  shape.insert(shape.end(), x.sizes().begin() + d + 1, x.sizes().end());
  // One -1 is inferred, as view does; view checks that the sizes multiply to x.size(d).
  int64_t known = 1, unknown = 0;
  for (int64_t s : sizes) s == -1 ? ++unknown : known *= s;
  EMBER_CHECK_KIND(
      Shape,
      unknown > 1 || (unknown == 1 ? known != 0 && x.size(d) % known == 0 : known == x.size(d)),
      "[unflatten] Provided sizes ", shape_str(sizes), " don't multiply up to the size of dim ",
      dim, " (", x.size(d), ") in the input ", shape_str(x.sizes()));
  // The -1 is x.size(d) / known, not inferred from numel (which an empty x makes ambiguous).
  if (unknown == 1)
    for (size_t i = static_cast<size_t>(d); i < static_cast<size_t>(d) + sizes.size(); ++i)
      if (shape[i] == -1) shape[i] = x.size(d) / known;
  return x.reshape(shape);
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, int64_t dim) {
  int64_t d = wrap_dim("take_along_dim", dim, x.dim());
  EMBER_CHECK_KIND(Shape, indices.dim() == x.dim(),
                   "[take_along_dim] input and indices should "
                   "have the same number of dimensions, but got ",
                   x.dim(), " and ", indices.dim());
  // Every dim but `dim` broadcasts between x and indices.
  Shape xs = x.sizes(), is = indices.sizes();
  xs[static_cast<size_t>(d)] = 1;
  is[static_cast<size_t>(d)] = 1;
  Shape common = broadcast_shape("take_along_dim", xs, is);
  Shape x_shape = common, i_shape = common;
  x_shape[static_cast<size_t>(d)] = x.size(d);
  i_shape[static_cast<size_t>(d)] = indices.size(d);
  return gather(x.expand(x_shape), d, indices.expand(i_shape));
}

}  // namespace ember
