// ops/selection.cpp: ops whose output size depends on the data -- nonzero, argwhere, where(cond),
// masked_select, masked_scatter, bincount, histc, unique, unique_consecutive -- composed of
// cumsum, scatter_add, index_select and sort, so every backend runs them (each reads one count
// back to the host to size its output, as PyTorch does). masked_select and masked_scatter are
// differentiable through index_select and where.
#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

// The positions (int64, ascending) of the true elements of a flat bool tensor.
Tensor true_positions(const Tensor& flat) {
  const TensorOptions i64{.dtype = kInt64, .device = flat.device()};
  const int64_t n = flat.numel();
  if (n == 0) return zeros({0}, i64);
  const Tensor as_int = flat.to(kInt64);
  const Tensor rank = cumsum(as_int, 0) - 1;
  const int64_t count = as_int.sum().item<int64_t>();
  // Each true element writes its position at its rank; false ones add 0 to a spare slot.
  const Tensor target = where(flat, rank, full({n}, count, i64));
  return zeros({count + 1}, i64)
      .scatter_add(0, target, arange(n, i64) * as_int)
      .narrow(0, 0, count);
}

void check_mask(const char* op, const Tensor& mask) {
  EMBER_CHECK_KIND(DType, mask.dtype() == kBool, "[", op,
                   "] only supports boolean masks, but got mask with dtype ", mask.dtype());
}

}  // namespace

Tensor nonzero(const Tensor& x) {
  NoGradGuard no_grad;
  const Tensor flat_pos = true_positions(ne(x, 0).reshape({-1}));
  const int64_t count = flat_pos.numel();
  if (x.dim() == 0 || count == 0)
    return zeros({count, x.dim()}, {.dtype = kInt64, .device = x.device()});
  // Linear positions to coordinates, last dim first.
  std::vector<Tensor> coords(static_cast<size_t>(x.dim()));
  Tensor rest = flat_pos;
  for (int64_t d = x.dim() - 1; d >= 0; --d) {
    coords[static_cast<size_t>(d)] = remainder(rest, x.size(d));
    rest = floor_divide(rest, x.size(d));
  }
  return stack(coords, 1);
}

Tensor argwhere(const Tensor& x) {
  return nonzero(x);
}

std::vector<Tensor> where(const Tensor& condition) {
  const Tensor nz = nonzero(condition);
  std::vector<Tensor> out;
  for (int64_t d = 0; d < condition.dim(); ++d) out.push_back(nz.select(1, d).contiguous());
  return out;
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  check_mask("masked_select", mask);
  const Device dev = operand_device("masked_select", {&x, &mask});
  const Shape shape = broadcast_shape("masked_select", x.sizes(), mask.sizes());
  Tensor at;
  {
    NoGradGuard no_grad;
    at = true_positions(on_device(mask, dev).expand(shape).reshape({-1}));
  }
  return x.expand(shape).reshape({-1}).index_select(0, at);
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  check_mask("masked_scatter", mask);
  const Device dev = operand_device("masked_scatter", {&x, &mask, &source});
  const Shape shape = broadcast_shape("masked_scatter", x.sizes(), mask.sizes());
  const Tensor m = on_device(mask, dev).expand(shape);
  Tensor from;  // for each element, the position in source it would take
  {
    NoGradGuard no_grad;
    const Tensor flat = m.reshape({-1}).to(kInt64);
    const int64_t count = flat.numel() ? flat.sum().item<int64_t>() : 0;
    EMBER_CHECK_KIND(Shape, source.numel() >= count, "[masked_scatter] the mask selects ", count,
                     " elements but source (shape ", shape_str(source.sizes()), ") has only ",
                     source.numel(), "; pass a source with at least as many");
    from = clamp(cumsum(flat, 0) - 1, 0).reshape(shape);
  }
  EMBER_CHECK_KIND(DType, source.dtype() == x.dtype(), "[masked_scatter] source dtype ",
                   source.dtype(), " differs from self's ", x.dtype(), "; convert one of them");
  if (source.numel() == 0) return x.expand(shape).clone();
  const Tensor picked = source.reshape({-1}).index_select(0, from.reshape({-1})).reshape(shape);
  return where(m, picked, x);
}

Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) {
  const Tensor out = ember::masked_scatter(*this, mask, source);
  EMBER_CHECK_KIND(Shape, out.sizes() == sizes(), "[masked_scatter_] mask of shape ",
                   shape_str(mask.sizes()), " can't be broadcast to the tensor's shape ",
                   shape_str(sizes()));
  return copy_(out);
}

Tensor bincount(const Tensor& x, const Tensor& weights, int64_t minlength) {
  EMBER_CHECK_KIND(DType, is_integral(x.dtype(), false),
                   "[bincount] takes a 1-D tensor of non-negative integers, got dtype ", x.dtype());
  EMBER_CHECK_KIND(Shape, x.dim() == 1, "[bincount] takes a 1-D tensor, got shape ",
                   shape_str(x.sizes()));
  EMBER_CHECK_KIND(Value, minlength >= 0, "[bincount] minlength must be >= 0, got ", minlength);
  const Device dev = x.device();
  const Tensor idx = x.to(kInt64);
  int64_t size = minlength;
  if (x.numel() > 0) {
    const int64_t lowest = min(idx).item<int64_t>();
    EMBER_CHECK_KIND(Value, lowest >= 0, "[bincount] input must be non-negative, got a minimum of ",
                     lowest);
    size = std::max(size, max(idx).item<int64_t>() + 1);
  }
  if (!weights.defined())
    return zeros({size}, {.dtype = kInt64, .device = dev}).scatter_add(0, idx, ones_like(idx));
  EMBER_CHECK_KIND(Shape, weights.sizes() == x.sizes(), "[bincount] weights of shape ",
                   shape_str(weights.sizes()), " must have input's shape ", shape_str(x.sizes()));
  // 16-bit weights sum in float32 and round once.
  const DType out = weights.is_floating_point() ? weights.dtype() : kFloat64;
  const DType acc = is_reduced_float(out) ? kFloat32 : out;
  return zeros({size}, {.dtype = acc, .device = dev})
      .scatter_add(0, idx, on_device(weights, dev).to(acc))
      .to(out);
}

Tensor histc(const Tensor& x, int64_t bins, const Scalar& min_value, const Scalar& max_value) {
  EMBER_CHECK_KIND(DType, x.is_floating_point(), "[histc] takes a floating tensor, got ", x.dtype(),
                   "; convert it first, e.g. x.to(kFloat32)");
  EMBER_CHECK_KIND(Value, bins > 0, "[histc] bins must be > 0, got ", bins);
  NoGradGuard no_grad;
  double lo = min_value.to_double(), hi = max_value.to_double();
  EMBER_CHECK_KIND(Value, lo <= hi, "[histc] max (", hi, ") must be >= min (", lo, ")");
  const Tensor flat = x.reshape({-1}).to(kFloat64);
  if (lo == hi && flat.numel() > 0) {  // the data's range (NaNs left out)
    const Tensor numbers = masked_select(flat, logical_not(isnan(flat)));
    if (numbers.numel() > 0) {
      lo = min(numbers).item<double>();
      hi = max(numbers).item<double>();
    }
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  EMBER_CHECK_KIND(Value, std::isfinite(lo) && std::isfinite(hi), "[histc] range [", lo, ", ", hi,
                   "] is not finite");
  // Elements in [lo, hi] (NaN is not) go to bin floor((v - lo) * bins / (hi - lo)), hi to the
  // last; the rest to a spare bin that is dropped.
  const Tensor inside = logical_and(ge(flat, lo), le(flat, hi));
  Tensor bin = clamp(floor((flat - lo) * (static_cast<double>(bins) / (hi - lo))), 0, bins - 1);
  bin = where(inside, bin, static_cast<double>(bins)).to(kInt64);
  return zeros({bins + 1}, {.dtype = x.dtype(), .device = x.device()})
      .scatter_add(0, bin, ones_like(flat).to(x.dtype()))
      .narrow(0, 0, bins);
}

namespace {

// unique's and unique_consecutive's result from a flat tensor v and where each new run starts.
detail::TensorTriple runs_of(const Tensor& v, const Tensor& starts, const Tensor& order,
                             const Shape& shape, bool return_inverse, bool return_counts) {
  const TensorOptions i64{.dtype = kInt64, .device = v.device()};
  const Tensor group = cumsum(starts, 0) - 1;  // each element's run
  const Tensor values = masked_select(v, starts);
  Tensor inverse, counts;
  if (return_inverse)
    inverse = (order.defined() ? zeros({v.numel()}, i64).scatter_add(0, order, group) : group)
                  .reshape(shape);
  if (return_counts) counts = zeros({values.numel()}, i64).scatter_add(0, group, ones_like(group));
  return {values, inverse, counts};
}

// Where a run of v starts: the first element and every one unequal to the one before (NaNs are
// unequal, as in PyTorch).
Tensor run_starts(const Tensor& v) {
  const int64_t n = v.numel();
  if (n == 0) return zeros({0}, {.dtype = kBool, .device = v.device()});
  return cat({ones({1}, {.dtype = kBool, .device = v.device()}),
              ne(v.narrow(0, 1, n - 1), v.narrow(0, 0, n - 1))},
             0);
}

void check_no_dim(const char* op, std::optional<int64_t> dim) {
  EMBER_CHECK_KIND(NotImplemented, !dim.has_value(), "[", op,
                   "] over a dim (unique slices) is not implemented; call it without dim for the "
                   "unique elements");
}

}  // namespace

detail::TensorTriple unique(const Tensor& x, bool /*sorted: always*/, bool return_inverse,
                            bool return_counts, std::optional<int64_t> dim) {
  check_no_dim("unique", dim);
  NoGradGuard no_grad;
  auto [v, order] = sort(x.reshape({-1}));
  return runs_of(v, run_starts(v), order, x.sizes(), return_inverse, return_counts);
}

detail::TensorTriple unique_consecutive(const Tensor& x, bool return_inverse, bool return_counts,
                                        std::optional<int64_t> dim) {
  check_no_dim("unique_consecutive", dim);
  NoGradGuard no_grad;
  const Tensor v = x.reshape({-1});
  return runs_of(v, run_starts(v), Tensor(), x.sizes(), return_inverse, return_counts);
}

}  // namespace ember
