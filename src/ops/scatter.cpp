// ops/scatter.cpp: scatter (src, value, or the legacy "add" / "multiply" reduce) and
// scatter_reduce ("sum", "prod", "mean", "amax", "amin", with or without self) composed of other
// ops, so every backend runs them and autograd differentiates them: index and src flatten to
// (position in self, value) pairs; writes go through index_put (the last write of a position
// wins), sums through index_add, maxima and minima sort the values first so that the extreme
// one is written last, and products scan each position's values (sorted together) by doubling.
#include "ops/op_helpers.h"

namespace ember {

namespace {

// index and src flattened: lin (k) the position in self's row-major elements each index entry
// names, vals (k) the src element written there (src's leading corner of index's shape).
struct Writes {
  Tensor lin, vals;
};

Writes flatten_writes(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                      const Tensor& src) {
  common_device(op, {&x, &index, &src});
  EMBER_CHECK_KIND(DType, index.dtype() == kInt64, "[", op, "] index must be int64, got ",
                   index.dtype());
  EMBER_CHECK_KIND(DType, src.dtype() == x.dtype(), "[", op,
                   "] Expected self.dtype to be equal to src.dtype, got ", x.dtype(), " and ",
                   src.dtype(), "; convert src with .to(self.dtype())");
  EMBER_CHECK_KIND(Shape, index.dim() == x.dim() && src.dim() == x.dim(), "[", op,
                   "] Index tensor must have the same number of dimensions as self and src (",
                   shape_str(index.sizes()), ", ", shape_str(x.sizes()), ", ",
                   shape_str(src.sizes()), ")");
  const int64_t d = wrap_dim_of(op, x, dim);
  for (int64_t k = 0; k < x.dim(); ++k)
    EMBER_CHECK_KIND(Shape, index.size(k) <= src.size(k) && (k == d || index.size(k) <= x.size(k)),
                     "[", op, "] Expected index ", shape_str(index.sizes()),
                     " to be no larger than src ", shape_str(src.sizes()),
                     " in every dimension and than self ", shape_str(x.sizes()),
                     " apart from dimension ", d);
  const int64_t size = x.dim() == 0 ? 1 : x.size(d);
  if (index.numel() > 0) {
    NoGradGuard no_grad;
    const int64_t lo = min(index).item<int64_t>(), hi = max(index).item<int64_t>();
    EMBER_CHECK_KIND(Index, lo >= 0 && hi < size, "[", op, "] index ", lo < 0 ? lo : hi,
                     " is out of bounds for dimension ", d, " with size ", size);
  }
  Tensor lin;
  {
    NoGradGuard no_grad;
    const auto i64 = TensorOptions{.dtype = kInt64, .device = x.device()};
    int64_t stride = 1;
    lin = zeros(index.sizes(), i64);
    for (int64_t k = x.dim() - 1; k >= 0; --k) {
      Shape along(static_cast<size_t>(x.dim()), 1);
      along[k] = index.size(k);
      lin = lin + (k == d ? index : arange(0, index.size(k), 1, i64).view(along)) * stride;
      stride *= x.size(k);
    }
  }
  Tensor corner = src;
  for (int64_t k = 0; k < src.dim(); ++k) corner = corner.narrow(k, 0, index.size(k));
  return {lin.reshape({-1}), corner.reshape({-1})};
}

// (n) counts of writes per position of self's n elements.
Tensor write_counts(const Tensor& lin, int64_t n) {
  NoGradGuard no_grad;
  const auto i64 = TensorOptions{.dtype = kInt64, .device = lin.device()};
  return zeros({n}, i64).index_add(0, lin, ones({lin.numel()}, i64));
}

// Each position's product of its written values: pairs sorted by position, then an inclusive
// segmented product scan by doubling; the last of each position's run holds the whole product.
Tensor scatter_prod(const Tensor& base, const Writes& w) {
  Tensor order = argsort(w.lin, 0, false, true);
  Tensor pos = w.lin.index_select(0, order), v = w.vals.index_select(0, order);
  const int64_t k = pos.numel();
  for (int64_t s = 1; s < k; s *= 2) {
    Tensor same = pos.narrow(0, s, k - s) == pos.narrow(0, 0, k - s);
    Tensor tail = v.narrow(0, s, k - s);
    v = cat({v.narrow(0, 0, s), where(same, tail * v.narrow(0, 0, k - s), tail)});
  }
  return index_put(base, {pos}, v);
}

// The largest (amax) or smallest (amin) written value per position: written in ascending order
// of value (descending for amin), NaN last, so the last write is the extreme.
Tensor scatter_extreme(const Tensor& base, const Writes& w, bool largest) {
  Tensor key = w.vals.detach();
  Tensor order = is_floating_point(key.dtype()) && !largest ? argsort(-key, 0, false, true)
                                                            : argsort(key, 0, !largest, true);
  return index_put(base, {w.lin.index_select(0, order)}, w.vals.index_select(0, order));
}

}  // namespace

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  Writes w = flatten_writes("scatter", x, dim, index, src);
  if (w.lin.numel() == 0) return x.clone();
  return index_put(x.reshape({-1}), {w.lin}, w.vals).view(x.sizes());
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter(
      x, dim, index,
      full(index.sizes(), value.to_double(), {.dtype = x.dtype(), .device = x.device()}));
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
               const std::string& reduce) {
  EMBER_CHECK(reduce == "add" || reduce == "multiply",
              "[scatter] reduce argument must be either add or multiply, got '", reduce,
              "'; scatter_reduce takes sum, prod, mean, amax and amin");
  return scatter_reduce(x, dim, index, src, reduce == "add" ? "sum" : "prod", true);
}

Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  EMBER_CHECK(
      reduce == "sum" || reduce == "prod" || reduce == "mean" || reduce == "amax" ||
          reduce == "amin",
      "[scatter_reduce] reduce argument must be either sum, prod, mean, amax or amin, got '",
      reduce, "'");
  Writes w = flatten_writes("scatter_reduce", x, dim, index, src);
  if (w.lin.numel() == 0) return x.clone();
  const int64_t n = x.numel();
  Tensor flat = x.reshape({-1});
  Tensor counts = write_counts(w.lin, n);
  Tensor touched = counts > 0;
  Tensor out;
  if (reduce == "sum" || reduce == "mean") {
    Tensor base = include_self ? flat : where(touched, zeros_like(flat), flat);
    out = index_add(base, 0, w.lin, w.vals);
    if (reduce == "mean") {
      Tensor divisor = (include_self ? counts + 1 : counts).clamp(Scalar(1)).to(x.dtype());
      out = where(touched,
                  is_floating_point(x.dtype()) ? out / divisor : floor_divide(out, divisor), flat);
    }
  } else if (reduce == "prod") {
    out = scatter_prod(flat, w);
    if (include_self) out = where(touched, flat * out, flat);
  } else {
    const bool largest = reduce == "amax";
    out = scatter_extreme(flat, w, largest);
    if (include_self) out = where(touched, largest ? maximum(flat, out) : minimum(flat, out), flat);
  }
  return out.view(x.sizes());
}

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  return copy_(ember::scatter(*this, dim, index, src));
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value) {
  return copy_(ember::scatter(*this, dim, index, value));
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src,
                         const std::string& reduce) {
  return copy_(ember::scatter(*this, dim, index, src, reduce));
}
Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                                const std::string& reduce, bool include_self) {
  return copy_(ember::scatter_reduce(*this, dim, index, src, reduce, include_self));
}

}  // namespace ember
