// ops/sort.cpp: ordering along a dim -- sort, argsort, msort, topk, kthvalue, median, nanmedian,
// mode -- on the backend's sort and topk (always stable: equal elements keep their order, so
// `stable` only names PyTorch's flag). NaN orders above every number (last ascending, first
// descending), as PyTorch. Each picks elements of x, so its gradient puts the output's gradient
// back at the picked indices.
#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

void record_pick(const char* name, const Tensor& x, const Tensor& out, const Tensor& indices,
                 int64_t d, bool squeezed) {
  if (!autograd::needs_grad({&x})) return;
  autograd::record(
      name, {&x}, out,
      [sizes = x.sizes(), saved = autograd::SavedTensor(indices), d, squeezed](const Tensor& g) {
        if (sizes.empty()) return std::vector<Tensor>{g.reshape(sizes)};
        Tensor idx = saved.unpack();
        Tensor gi = squeezed ? g.unsqueeze(d) : g;
        if (squeezed) idx = idx.unsqueeze(d);
        return std::vector<Tensor>{
            zeros(sizes, {.dtype = g.dtype(), .device = g.device()}).scatter_add(d, idx, gi)};
      });
}

namespace {

// x's dim d as the last of contiguous rows, with outputs of `k` per row (values, indices) in x's
// layout: the backend's sort (k < 0) or topk.
detail::TensorPair order_rows(const Tensor& x, int64_t d, int64_t k, bool flag) {
  NoGradGuard no_grad;
  if (x.dim() == 0) return {x.clone(), zeros({}, {.dtype = kInt64, .device = x.device()})};
  Tensor rows = x.movedim(d, -1).contiguous();
  Shape out_shape = rows.sizes();
  if (k >= 0) out_shape.back() = k;
  Tensor values = make_tensor(out_shape, x.dtype(), x.device());
  Tensor indices = make_tensor(out_shape, kInt64, x.device());
  if (values.numel() > 0) {
    if (k < 0)
      backend_for(rows).sort(view_of(values), view_of(indices), view_of(rows), flag);
    else
      backend_for(rows).topk(view_of(values), view_of(indices), view_of(rows), k, flag);
  }
  return {values.movedim(-1, d).contiguous(), indices.movedim(-1, d).contiguous()};
}

int64_t dim_size(const Tensor& x, int64_t d) {
  return x.dim() == 0 ? 1 : x.size(d);
}

}  // namespace

detail::TensorPair sort(const Tensor& x, int64_t dim, bool descending, bool /*stable*/) {
  const int64_t d = wrap_dim_of("sort", x, dim);
  auto [values, indices] = order_rows(x, d, -1, descending);
  record_pick("SortBackward0", x, values, indices, d, false);
  return {values, indices};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  NoGradGuard no_grad;
  return std::get<1>(sort(x, dim, descending, stable));
}

Tensor msort(const Tensor& x) {
  return std::get<0>(sort(x, 0));
}

detail::TensorPair topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  const int64_t d = wrap_dim_of("topk", x, dim);
  EMBER_CHECK_KIND(Index, k >= 0 && k <= dim_size(x, d), "[topk] k (", k,
                   ") is out of range for dimension ", d, " of size ", dim_size(x, d), " (shape ",
                   shape_str(x.sizes()), "); k must be in [0, ", dim_size(x, d), "]");
  auto [values, indices] = order_rows(x, d, k, largest);
  record_pick("TopkBackward0", x, values, indices, d, false);
  return {values, indices};
}

detail::TensorPair kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim_of("kthvalue", x, dim);
  EMBER_CHECK_KIND(Index, k >= 1 && k <= dim_size(x, d), "[kthvalue] k (", k,
                   ") is out of range for dimension ", d, " of size ", dim_size(x, d), " (shape ",
                   shape_str(x.sizes()), "); k must be in [1, ", dim_size(x, d), "]");
  Tensor values, indices;
  {
    auto [v, i] = order_rows(x, d, k, false);
    NoGradGuard no_grad;
    values = x.dim() == 0 ? v : v.narrow(d, k - 1, 1);
    indices = x.dim() == 0 ? i : i.narrow(d, k - 1, 1);
    if (!keepdim && x.dim() > 0) {
      values = values.squeeze(d).contiguous();
      indices = indices.squeeze(d).contiguous();
    } else {
      values = values.contiguous();
      indices = indices.contiguous();
    }
  }
  record_pick("KthvalueBackward0", x, values, indices, d, !keepdim && x.dim() > 0);
  return {values, indices};
}

namespace {

// One element per slice along d of x sorted ascending: `position(sorted, d, n)` gives its
// position in each sorted slice ((..., 1, ...), int64); values and indices there, with the
// gradient put back at the index. `what` names the statistic in the empty-dim error.
template <class Position>
detail::TensorPair pick_sorted(const char* op, const char* what, const char* node, const Tensor& x,
                               int64_t dim, bool keepdim, Position position) {
  const int64_t d = wrap_dim_of(op, x, dim);
  const int64_t n = dim_size(x, d);
  EMBER_CHECK_KIND(Index, n > 0, "[", op, "] cannot take the ", what, " of an empty dimension ", d,
                   " (shape ", shape_str(x.sizes()), ")");
  Tensor values, indices;
  {
    auto [sv, si] = order_rows(x, d, -1, false);
    NoGradGuard no_grad;
    if (x.dim() == 0) {
      values = sv;
      indices = si;
    } else {
      const Tensor at = position(sv, d, n);
      values = sv.gather(d, at);
      indices = si.gather(d, at);
      if (!keepdim) {
        values = values.squeeze(d);
        indices = indices.squeeze(d);
      }
    }
  }
  record_pick(node, x, values, indices, d, !keepdim && x.dim() > 0);
  return {values, indices};
}

// The lower median along d: with `ignore_nan`, of the numbers only (NaN when all are NaN);
// otherwise NaN (the first of them) when a NaN is there.
detail::TensorPair median_along(const char* op, const char* node, const Tensor& x, int64_t dim,
                                bool keepdim, bool ignore_nan) {
  return pick_sorted(
      op, "median", node, x, dim, keepdim, [&](const Tensor& sorted, int64_t d, int64_t n) {
        if (x.is_floating_point()) {
          Tensor numbers = logical_not(isnan(x)).sum({d}, true);
          return ignore_nan ? floor_divide(clamp(numbers - 1, 0), 2)
                            : where(lt(numbers, n), numbers, full_like(numbers, (n - 1) / 2));
        }
        Shape s = sorted.sizes();
        s[static_cast<size_t>(d)] = 1;
        return full(s, (n - 1) / 2, {.dtype = kInt64, .device = x.device()});
      });
}

// Over all elements: NaN for an empty floating tensor, as PyTorch.
Tensor median_all(const char* op, const char* node, const Tensor& x, bool ignore_nan) {
  if (x.numel() == 0) {
    EMBER_CHECK_KIND(DType, x.is_floating_point(), "[", op,
                     "] of an empty tensor is NaN, which dtype ", x.dtype(),
                     " cannot hold; pass a floating tensor");
    return full({}, std::numeric_limits<double>::quiet_NaN(),
                {.dtype = x.dtype(), .device = x.device()});
  }
  return std::get<0>(median_along(op, node, x.reshape({-1}), 0, false, ignore_nan));
}

}  // namespace

Tensor median(const Tensor& x) {
  return median_all("median", "MedianBackward0", x, false);
}
detail::TensorPair median(const Tensor& x, int64_t dim, bool keepdim) {
  return median_along("median", "MedianBackward1", x, dim, keepdim, false);
}
Tensor nanmedian(const Tensor& x) {
  return median_all("nanmedian", "NanmedianBackward0", x, true);
}
detail::TensorPair nanmedian(const Tensor& x, int64_t dim, bool keepdim) {
  return median_along("nanmedian", "NanmedianBackward1", x, dim, keepdim, true);
}

detail::TensorPair mode(const Tensor& x, int64_t dim, bool keepdim) {
  // Runs of equal values (NaNs one run) in the sorted slices: where each run starts, so each
  // position's count so far; the first longest run ends at the smallest most frequent value, and
  // its last element is that value's last position in x (the sort is stable).
  return pick_sorted(
      "mode", "mode", "ModeBackward0", x, dim, keepdim,
      [&](const Tensor& sorted, int64_t d, int64_t n) {
        Shape along(static_cast<size_t>(x.dim()), 1);
        along[static_cast<size_t>(d)] = n;
        const Tensor pos = arange(n, {.dtype = kInt64, .device = x.device()}).reshape(along);
        const Tensor next = sorted.narrow(d, 1, n - 1), prev = sorted.narrow(d, 0, n - 1);
        Tensor same = eq(next, prev);
        if (x.is_floating_point()) same = logical_or(same, logical_and(isnan(next), isnan(prev)));
        Shape first = x.sizes();
        first[static_cast<size_t>(d)] = 1;
        const Tensor starts =
            cat({ones(first, {.dtype = kBool, .device = x.device()}), logical_not(same)}, d);
        const Tensor run_start = std::get<0>(cummax(where(starts, pos, 0), d));
        return argmax(pos - run_start, d, true);
      });
}

}  // namespace ember
