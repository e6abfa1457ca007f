// ops/index_ops.cpp: cat, stack, index_select, gather, scatter_add and one_hot.
#include <algorithm>

#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

Tensor as_index(const char* op, const Tensor& index) {
  EMBER_CHECK_KIND(DType, index.dtype() == kInt64 || index.dtype() == kInt32, "[", op,
                   "] Expected dtype int64 or int32 for index, got ", index.dtype());
  return index.to(kInt64);
}

// Throws PyTorch's out-of-bounds message if any index is outside [-size, size) (after wrapping).
void check_bounds(const char* op, const Tensor& index, int64_t size, int64_t dim) {
  if (index.numel() == 0) return;
  int64_t lo = min(index).item<int64_t>(), hi = max(index).item<int64_t>();
  int64_t bad = lo < 0 ? lo : hi;
  EMBER_CHECK_KIND(Index, lo >= 0 && hi < size, "[", op, "] index ", bad,
                   " is out of bounds for dimension ", dim, " with size ", size);
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "[cat] expected a non-empty list of Tensors");
  // PyTorch skips legacy 1-D empty tensors when other tensors have more dims, but they still take
  // part in type promotion (result_type over all inputs in aten's cat meta function).
  std::vector<const Tensor*> parts;
  std::vector<size_t> positions;  // of parts in `tensors`, for messages
  DType dtype = tensors[0].dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    dtype = promote_types(dtype, t.dtype());
    if (t.dim() == 1 && t.numel() == 0) continue;
    parts.push_back(&t);
    positions.push_back(i);
  }
  if (parts.empty()) return tensors[0].to(dtype, false, true);
  const Tensor& ref = *parts[0];
  EMBER_CHECK_KIND(Shape, ref.dim() > 0, "[cat] zero-dimensional tensor (at position ",
                   positions[0], ") cannot be concatenated; use stack() or unsqueeze it first");
  int64_t d = wrap_dim("cat", dim, ref.dim());
  Device device = ref.device();
  Shape shape = ref.sizes();
  shape[d] = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    const Tensor& t = *parts[p];
    size_t i = positions[p];
    common_device("cat", {&ref, &t});
    EMBER_CHECK_KIND(Shape, t.dim() == ref.dim(),
                     "[cat] Tensors must have same number of "
                     "dimensions: got ",
                     ref.dim(), " and ", t.dim());
    for (int64_t k = 0; k < t.dim(); ++k)
      EMBER_CHECK_KIND(Shape, k == d || t.size(k) == ref.size(k),
                       "[cat] Sizes of tensors must "
                       "match except in dimension ",
                       d, ". Expected size ", ref.size(k), " but got size ", t.size(k),
                       " for tensor number ", i, " in the list (", shape_str(ref.sizes()), " vs ",
                       shape_str(t.sizes()), ")");
    shape[d] += t.size(d);
  }
  Tensor out = make_tensor(shape, dtype, device);
  int64_t offset = 0;
  for (const Tensor* t : parts) {
    out.narrow(d, offset, t->size(d)).copy_(*t);
    offset += t->size(d);
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "[stack] expected a non-empty list of Tensors");
  int64_t d = wrap_dim("stack", dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK_KIND(Shape, tensors[i].sizes() == tensors[0].sizes(),
                     "[stack] stack expects each "
                     "tensor to be equal size, but got ",
                     shape_str(tensors[0].sizes()), " at entry 0 and ",
                     shape_str(tensors[i].sizes()), " at entry ", i);
    parts.push_back(tensors[i].unsqueeze(d));
  }
  return cat(parts, d);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index0) {
  common_device("index_select", {&x, &index0});
  EMBER_CHECK_KIND(Shape, index0.dim() <= 1, "[index_select] index must be 1-D or 0-D, got ",
                   index0.dim(), "-D of shape ", shape_str(index0.sizes()));
  Tensor index = as_index("index_select", index0).reshape({-1});
  int64_t d = wrap_dim("index_select", dim, x.dim());
  EMBER_CHECK_KIND(Index, x.dim() > 0 || index.numel() == 1,
                   "[index_select] Index to scalar can "
                   "have only 1 value, got ",
                   index.numel(), " value(s)");
  int64_t size = x.dim() == 0 ? 1 : x.size(d);
  check_bounds("index_select", index, size, d);
  Shape shape = x.sizes();
  if (x.dim() > 0) shape[d] = index.numel();
  Tensor out = make_tensor(shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  Tensor src = x.contiguous();
  backend_for(x).index_select(view_of(out), view_of(src), d, view_of(index));
  autograd::record(
      "IndexSelectBackward0", {&x}, out,
      [sizes = x.sizes(), dtype = x.dtype(), device = x.device(), d, index](const Tensor& g) {
        // Add each gradient row back at its index: scatter_add with the index
        // broadcast along the other dims.
        Tensor r = zeros(sizes, {.dtype = dtype, .device = device});
        if (sizes.empty()) return std::vector<Tensor>{r.add_(g.sum())};
        Shape shape(sizes.size(), 1);
        shape[d] = index.numel();
        Tensor gc = g.contiguous();
        if (gc.numel() > 0)  // index was checked in the forward
          backend_for(r).scatter_add(view_of(r), d, view_of(index.view(shape).expand(gc.sizes())),
                                     view_of(gc));
        return std::vector<Tensor>{r};
      });
  return out;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index0) {
  common_device("gather", {&x, &index0});
  Tensor index = as_index("gather", index0);
  int64_t d = wrap_dim("gather", dim, x.dim());
  EMBER_CHECK_KIND(Shape, index.dim() == x.dim(),
                   "[gather] Index tensor must have the same number "
                   "of dimensions as input tensor (",
                   shape_str(index.sizes()), " vs ", shape_str(x.sizes()), ")");
  for (int64_t k = 0; k < x.dim(); ++k)
    EMBER_CHECK_KIND(Shape, k == d || index.size(k) <= x.size(k),
                     "[gather] Size does not match at "
                     "dimension ",
                     k, " expected index ", shape_str(index.sizes()), " to be smaller than self ",
                     shape_str(x.sizes()), " apart from dimension ", d);
  check_bounds("gather", index, x.dim() == 0 ? 1 : x.size(d), d);
  Tensor out = make_tensor(index.sizes(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  backend_for(x).gather(view_of(out), view_of(x), d, view_of(index));
  autograd::record(
      "GatherBackward0", {&x}, out,
      [sizes = x.sizes(), dtype = x.dtype(), device = x.device(), d, index](const Tensor& g) {
        Tensor r = zeros(sizes, {.dtype = dtype, .device = device});
        return std::vector<Tensor>{r.scatter_add_(d, index, g)};
      });
  return out;
}

Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index0, const Tensor& src) {
  common_device("scatter_add_", {this, &index0, &src});
  Tensor index = as_index("scatter_add_", index0);
  int64_t d = wrap_dim("scatter_add_", dim, this->dim());
  EMBER_CHECK_KIND(DType, src.dtype() == dtype(),
                   "[scatter_add_] Expected self.dtype to be equal "
                   "to src.dtype, got ",
                   dtype(), " and ", src.dtype());
  EMBER_CHECK_KIND(Shape, index.dim() == this->dim() && src.dim() == this->dim(),
                   "[scatter_add_] Index tensor must have the same number of dimensions as self "
                   "and src (",
                   shape_str(index.sizes()), ", ", shape_str(sizes()), ", ", shape_str(src.sizes()),
                   ")");
  for (int64_t k = 0; k < this->dim(); ++k) {
    EMBER_CHECK_KIND(Shape, index.size(k) <= src.size(k), "[scatter_add_] Expected index ",
                     shape_str(index.sizes()), " to be smaller than src ", shape_str(src.sizes()),
                     " in every dimension");
    EMBER_CHECK_KIND(Shape, k == d || index.size(k) <= size(k), "[scatter_add_] Expected index ",
                     shape_str(index.sizes()), " to be smaller than self ", shape_str(sizes()),
                     " apart from dimension ", d);
  }
  check_bounds("scatter_add_", index, this->dim() == 0 ? 1 : size(d), d);
  check_writable("scatter_add_", *this);
  storage()->bump_version();
  autograd::record_inplace(
      "ScatterAddBackward0", *this, {&src}, [d, index, src_sizes = src.sizes()](const Tensor& g) {
        Tensor picked = g.gather(d, index);
        if (picked.sizes() == src_sizes) return std::vector<Tensor>{g, picked};
        // src may be larger than index: only its leading corner was used.
        Tensor r = zeros(src_sizes, {.dtype = g.dtype(), .device = g.device()});
        Tensor corner = r;
        for (int64_t k = 0; k < picked.dim(); ++k) corner = corner.narrow(k, 0, picked.size(k));
        corner.copy_(picked);
        return std::vector<Tensor>{g, r};
      });
  if (index.numel() > 0)
    backend_for(*this).scatter_add(view_of(*this), d, view_of(index), view_of(src));
  return *this;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  // Autocast's "promote" rule: mixed floating inputs run in the widest of them.
  if (autocast_active(x) && x.dtype() != src.dtype() && is_floating_point(x.dtype()) &&
      is_floating_point(src.dtype())) {
    DType wide = promote_types(x.dtype(), src.dtype());
    return x.to(wide).clone().scatter_add_(dim, index, src.to(wide));
  }
  return x.clone().scatter_add_(dim, index, src);
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  EMBER_CHECK_KIND(DType, indices.dtype() == kInt64,
                   "[one_hot] is only applicable to index tensor "
                   "of dtype int64, got ",
                   indices.dtype());
  if (indices.numel() > 0) {
    EMBER_CHECK(min(indices).item<int64_t>() >= 0, "[one_hot] Class values must be non-negative.");
    if (num_classes == -1)
      num_classes = max(indices).item<int64_t>() + 1;
    else
      EMBER_CHECK(max(indices).item<int64_t>() < num_classes,
                  "[one_hot] Class values must be smaller than num_classes.");
  } else {
    EMBER_CHECK(num_classes != -1,
                "[one_hot] Can not infer total number of classes from empty "
                "tensor.");
  }
  Tensor classes = arange(num_classes, {.dtype = kInt64, .device = indices.device()});
  return eq(indices.unsqueeze(-1), classes).to(kInt64);
}

}  // namespace ember
