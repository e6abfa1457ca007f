// ops/index_update.cpp: writing along a dim at a list of indices -- index_add, index_copy,
// index_fill (and their in-place forms) and index_put with a list of index tensors (advanced
// indexing's assignment, accumulate or not; a position named twice takes the last copy) --
// composed of sort, scatter_add, masks and where, so every backend runs them and gradients
// reach self and source.
#include "autograd/function.h"
#include "core/backend.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

// index along d as a tensor broadcastable to (..., n, ...) of x's rank.
Tensor along(const Tensor& index, int64_t ndim, int64_t d) {
  Shape s(static_cast<size_t>(ndim), 1);
  s[static_cast<size_t>(d)] = index.numel();
  return index.reshape(s);
}

// Checks index (1-D int64 within x's dim d) and source's shape; returns the wrapped dim.
int64_t check_index(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                    const Tensor* source) {
  const int64_t d = wrap_dim_of(op, x, dim);
  EMBER_CHECK_KIND(DType, index.dtype() == kInt64, "[", op, "] index must be int64, got ",
                   index.dtype());
  EMBER_CHECK_KIND(Shape, index.dim() <= 1, "[", op, "] index must be 1-D, got shape ",
                   shape_str(index.sizes()));
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  if (index.numel() > 0) {
    NoGradGuard no_grad;
    const int64_t lo = min(index).item<int64_t>(), hi = max(index).item<int64_t>();
    EMBER_CHECK_KIND(Index, lo >= -n && hi < n, "[", op, "] index ", lo < -n ? lo : hi,
                     " is out of bounds for dimension ", d, " with size ", n);
  }
  if (source) {
    Shape want = x.sizes();
    if (!want.empty()) want[static_cast<size_t>(d)] = index.numel();
    EMBER_CHECK_KIND(Shape, source->sizes() == want || (x.dim() == 0 && source->numel() == 1), "[",
                     op, "] source of shape ", shape_str(source->sizes()), " must be ",
                     shape_str(want), " (self's shape with index's length at dim ", d, ")");
  }
  return d;
}

// Negative indices counted from the end.
Tensor wrapped(const Tensor& index, int64_t n) {
  return where(lt(index, 0), index + n, index).reshape({-1});
}

// The positions along d that index names, as a bool mask broadcastable to x.
Tensor named_positions(const Tensor& x, int64_t d, const Tensor& index) {
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  const TensorOptions i64{.dtype = kInt64, .device = x.device()};
  const Tensor hits = zeros({n}, i64).scatter_add(0, index, ones_like(index));
  return x.dim() == 0 ? gt(hits, 0).reshape({}) : along(gt(hits, 0), x.dim(), d);
}

}  // namespace

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index0, const Tensor& source,
                 const Scalar& alpha) {
  const int64_t d = check_index("index_add", x, dim, index0, &source);
  if (x.dim() == 0) return x + source.reshape({}) * alpha;
  const Tensor index = wrapped(on_device(index0, x.device()), x.size(d));
  Tensor out;
  {
    // The backend's scatter_add with the index broadcast along the other dims (the bounds are
    // checked on the 1-D index above, not on the broadcast one).
    NoGradGuard no_grad;
    const Tensor src =
        (alpha.to_double() == 1.0 ? source : source * alpha).to(x.dtype()).contiguous();
    out = x.contiguous().clone();
    if (src.numel() > 0)
      backend_for(out).scatter_add(
          view_of(out), d, view_of(along(index, x.dim(), d).expand(src.sizes())), view_of(src));
  }
  autograd::record("IndexAddBackward0", {&x, &source}, out,
                   [d, index, alpha, src_dtype = source.dtype()](const Tensor& g) {
                     Tensor picked = g.index_select(d, index);
                     if (alpha.to_double() != 1.0) picked = picked * alpha;
                     return std::vector<Tensor>{g, picked.to(src_dtype)};
                   });
  return out;
}

Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index0, const Tensor& source) {
  const int64_t d = check_index("index_copy", x, dim, index0, &source);
  if (x.dim() == 0) return source.reshape({}).to(x.dtype());
  const Tensor index = wrapped(on_device(index0, x.device()), x.size(d));
  // A position named more than once takes its last source slice (PyTorch's CPU order): keep
  // each index's last occurrence, so that the adding below copies.
  auto [sorted, order] = index.reshape({-1}).sort(0, false, true);
  const int64_t n = sorted.numel();
  Tensor unique_index = index, from = source;
  if (n > 1) {
    Tensor last = cat({sorted.narrow(0, 1, n - 1) != sorted.narrow(0, 0, n - 1),
                       ones({1}, {.dtype = kBool, .device = x.device()})});
    unique_index = sorted.masked_select(last);
    from = source.index_select(d, order.masked_select(last));
  }
  const Tensor placed = index_add(zeros_like(x), d, unique_index, from);
  return where(named_positions(x, d, index), placed, x);
}

Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index0, const Scalar& value) {
  const int64_t d = check_index("index_fill", x, dim, index0, nullptr);
  const Tensor index = wrapped(on_device(index0, x.device()), x.dim() == 0 ? 1 : x.size(d));
  return masked_fill(x, named_positions(x, d, index), value);
}

Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source,
                           const Scalar& alpha) {
  return copy_(ember::index_add(*this, dim, index, source, alpha));
}
Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) {
  return copy_(ember::index_copy(*this, dim, index, source));
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Scalar& value) {
  return copy_(ember::index_fill(*this, dim, index, value));
}

Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices0, const Tensor& values,
                 bool accumulate) {
  EMBER_CHECK_KIND(Index, !indices0.empty() && static_cast<int64_t>(indices0.size()) <= x.dim(),
                   "[index_put] needs 1 to ", x.dim(), " index tensors for a tensor of shape ",
                   shape_str(x.sizes()), ", got ", indices0.size());
  // Bool masks become their coordinates; the index tensors broadcast together.
  std::vector<Tensor> indices;
  for (const Tensor& t : indices0) {
    if (t.dtype() == kBool) {
      for (const Tensor& c : where(on_device(t, x.device()))) indices.push_back(c);
    } else {
      EMBER_CHECK_KIND(DType, t.dtype() == kInt64,
                       "[index_put] indices must be int64 or bool, got ", t.dtype());
      indices.push_back(on_device(t, x.device()));
    }
  }
  const int64_t k = static_cast<int64_t>(indices.size());
  EMBER_CHECK_KIND(Index, k <= x.dim(), "[index_put] too many indices (", k,
                   ") for a tensor of shape ", shape_str(x.sizes()));
  Shape b = indices[0].sizes();
  for (const Tensor& t : indices) b = broadcast_shape("index_put", b, t.sizes());
  // The first k dims flattened into one: linear positions there, bounds checked per dim.
  Tensor linear = zeros(b, {.dtype = kInt64, .device = x.device()});
  int64_t lead = 1;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t n = x.size(i);
    lead *= n;
    Tensor idx = indices[static_cast<size_t>(i)].expand(b);
    if (idx.numel() > 0) {
      NoGradGuard no_grad;
      const int64_t lo = min(idx).item<int64_t>(), hi = max(idx).item<int64_t>();
      EMBER_CHECK_KIND(Index, lo >= -n && hi < n, "[index_put] index ", lo < -n ? lo : hi,
                       " is out of bounds for dimension ", i, " with size ", n);
    }
    linear = linear * n + where(lt(idx, 0), idx + n, idx);
  }
  Shape rest(x.sizes().begin() + k, x.sizes().end()), flat_shape{lead};
  flat_shape.insert(flat_shape.end(), rest.begin(), rest.end());
  Shape value_shape{linear.numel()};
  value_shape.insert(value_shape.end(), rest.begin(), rest.end());
  Shape expanded = b;
  expanded.insert(expanded.end(), rest.begin(), rest.end());
  const Tensor v = values.to(x.dtype()).expand(expanded).reshape(value_shape);
  const Tensor flat = x.reshape(flat_shape), at = linear.reshape({-1});
  const Tensor out = accumulate ? index_add(flat, 0, at, v) : index_copy(flat, 0, at, v);
  return out.reshape(x.sizes());
}

Tensor& Tensor::index_put_(const std::vector<Tensor>& indices, const Tensor& values,
                           bool accumulate) {
  return copy_(ember::index_put(*this, indices, values, accumulate));
}

}  // namespace ember
