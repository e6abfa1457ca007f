// ops/views.cpp: ops that return a view of the same storage (no data is copied).
#include <algorithm>

#include "autograd/function.h"
#include "core/make_tensor.h"
#include "core/shape.h"
#include "ember/creation.h"
#include "ember/ops.h"
#include "ember/tensor.h"

namespace ember {

namespace {

// A view of x recorded for autograd with backward `fn`.
template <class F>
Tensor as_view(const Tensor& x, Shape sizes, Shape strides, int64_t offset, const char* name,
               F&& fn) {
  Tensor out = make_view(x, std::move(sizes), std::move(strides), offset);
  autograd::record(name, {&x}, out, std::forward<F>(fn));
  return out;
}

auto reshape_back(const Tensor& x) {
  return [sizes = x.sizes()](const Tensor& g) -> std::vector<Tensor> { return {g.reshape(sizes)}; };
}

// Backward of a view that picks part of x: zeros with the part filled from the gradient.
template <class Pick>
auto scatter_back(const Tensor& x, Pick pick) {
  return [sizes = x.sizes(), dtype = x.dtype(), device = x.device(),
          pick](const Tensor& g) -> std::vector<Tensor> {
    Tensor r = zeros(sizes, {.dtype = dtype, .device = device});
    pick(r).copy_(g);
    return {r};
  };
}

}  // namespace

Tensor Tensor::view(const Shape& shape) const {
  Shape sizes = infer_size("view", shape, numel());
  auto strides = view_strides(this->sizes(), this->strides(), sizes);
  EMBER_CHECK_KIND(Shape, strides.has_value(), "[view] view size ", shape_str(shape),
                   " is not compatible with input tensor's size ", shape_str(this->sizes()),
                   " and stride ", shape_str(this->strides()),
                   " (at least one dimension spans across two contiguous subspaces). Use "
                   ".reshape(...) instead.");
  return as_view(*this, std::move(sizes), std::move(*strides), storage_offset(), "ViewBackward0",
                 reshape_back(*this));
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape sizes = infer_size("reshape", shape, numel());
  if (auto strides = view_strides(this->sizes(), this->strides(), sizes))
    return as_view(*this, std::move(sizes), std::move(*strides), storage_offset(), "ViewBackward0",
                   reshape_back(*this));
  return clone().view(sizes);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  int64_t s = wrap_dim("flatten", start_dim, dim()), e = wrap_dim("flatten", end_dim, dim());
  EMBER_CHECK_KIND(Index, s <= e, "[flatten] start_dim (", start_dim,
                   ") cannot come after end_dim (", end_dim, ")");
  Shape sizes(this->sizes().begin(), this->sizes().begin() + s);
  int64_t n = 1;
  for (int64_t d = s; d <= e; ++d) n *= this->sizes()[d];
  sizes.push_back(n);
  sizes.insert(sizes.end(), this->sizes().begin() + e + 1, this->sizes().end());
  return reshape(sizes);
}

Tensor Tensor::squeeze() const {
  Shape sizes, strides;
  for (int64_t d = 0; d < dim(); ++d) {
    if (this->sizes()[d] == 1) continue;
    sizes.push_back(this->sizes()[d]);
    strides.push_back(this->strides()[d]);
  }
  return as_view(*this, std::move(sizes), std::move(strides), storage_offset(), "SqueezeBackward0",
                 reshape_back(*this));
}

Tensor Tensor::squeeze(int64_t d) const {
  if (dim() == 0) {
    wrap_dim("squeeze", d, 0);
    return *this;
  }
  d = wrap_dim("squeeze", d, dim());
  if (sizes()[d] != 1) return *this;
  Shape sizes = this->sizes(), strides = this->strides();
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return as_view(*this, std::move(sizes), std::move(strides), storage_offset(), "SqueezeBackward1",
                 reshape_back(*this));
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim("unsqueeze", d, dim() + 1);
  Shape sizes = this->sizes(), strides = this->strides();
  int64_t stride = d < dim() ? sizes[d] * strides[d] : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return as_view(*this, std::move(sizes), std::move(strides), storage_offset(),
                 "UnsqueezeBackward0", reshape_back(*this));
}

Tensor Tensor::permute(const Shape& dims) const {
  EMBER_CHECK_KIND(Shape, static_cast<int64_t>(dims.size()) == dim(),
                   "[permute] number of dims don't match: the tensor has ", dim(),
                   " dims but the permutation ", shape_str(dims), " has ", dims.size());
  Shape sizes(dims.size()), strides(dims.size()), inverse(dims.size());
  std::vector<bool> seen(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim("permute", dims[i], dim());
    EMBER_CHECK_KIND(Index, !seen[d], "[permute] repeated dim ", d, " in ", shape_str(dims));
    seen[d] = true;
    sizes[i] = this->sizes()[d];
    strides[i] = this->strides()[d];
    inverse[d] = static_cast<int64_t>(i);
  }
  return as_view(
      *this, std::move(sizes), std::move(strides), storage_offset(), "PermuteBackward0",
      [inverse](const Tensor& g) -> std::vector<Tensor> { return {g.permute(inverse)}; });
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  if (dim() == 0) {
    wrap_dim("transpose", dim0, 0);
    wrap_dim("transpose", dim1, 0);
    return *this;
  }
  int64_t a = wrap_dim("transpose", dim0, dim()), b = wrap_dim("transpose", dim1, dim());
  Shape sizes = this->sizes(), strides = this->strides();
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return as_view(*this, std::move(sizes), std::move(strides), storage_offset(),
                 "TransposeBackward0",
                 [a, b](const Tensor& g) -> std::vector<Tensor> { return {g.transpose(a, b)}; });
}

Tensor Tensor::t() const {
  EMBER_CHECK_KIND(Shape, dim() <= 2, "[t] expects a tensor with <= 2 dimensions, but self is ",
                   dim(), "D; use transpose(dim0, dim1) or mT-style permute instead");
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  EMBER_CHECK_KIND(Shape, dim() > 0, "[narrow] cannot be applied to a 0-dim tensor");
  d = wrap_dim("narrow", d, dim());
  int64_t size = sizes()[d];
  if (start < 0) start += size;
  EMBER_CHECK_KIND(Index, start >= 0 && start <= size, "[narrow] start (", start,
                   ") out of range for dimension ", d, " of size ", size);
  EMBER_CHECK_KIND(Index, length >= 0 && start + length <= size, "[narrow] start (", start,
                   ") + length (", length, ") exceeds dimension size (", size, ")");
  Shape sizes = this->sizes();
  sizes[d] = length;
  return as_view(*this, std::move(sizes), strides(), storage_offset() + start * strides()[d],
                 "NarrowBackward0", scatter_back(*this, [d, start, length](const Tensor& r) {
                   return r.narrow(d, start, length);
                 }));
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  EMBER_CHECK_KIND(Shape, dim() > 0, "[slice] cannot be applied to a 0-dim tensor");
  EMBER_CHECK(step > 0, "[slice] step must be positive, got ", step);
  d = wrap_dim("slice", d, dim());
  int64_t size = sizes()[d];
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  Shape sizes = this->sizes(), strides = this->strides();
  sizes[d] = (e - s + step - 1) / step;
  int64_t offset = storage_offset() + s * strides[d];
  strides[d] *= step;
  return as_view(
      *this, std::move(sizes), std::move(strides), offset, "SliceBackward0",
      scatter_back(*this, [d, s, e, step](const Tensor& r) { return r.slice(d, s, e, step); }));
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  EMBER_CHECK_KIND(Index, dim() > 0, "[select] invalid index of a 0-dim tensor");
  d = wrap_dim("select", d, dim());
  int64_t size = sizes()[d];
  EMBER_CHECK_KIND(Index, index >= -size && index < size, "[select] index ", index,
                   " is out of bounds for dimension ", d, " with size ", size);
  if (index < 0) index += size;
  Shape sizes = this->sizes(), strides = this->strides();
  int64_t offset = storage_offset() + index * strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return as_view(*this, std::move(sizes), std::move(strides), offset, "SelectBackward0",
                 scatter_back(*this, [d, index](const Tensor& r) { return r.select(d, index); }));
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  EMBER_CHECK_KIND(Shape, x.dim() >= 2, "[diagonal] needs at least 2 dims, got shape ",
                   shape_str(x.sizes()));
  const int64_t d1 = wrap_dim("diagonal", dim1, x.dim()), d2 = wrap_dim("diagonal", dim2, x.dim());
  EMBER_CHECK_KIND(Index, d1 != d2, "[diagonal] dim1 and dim2 cannot be the same dim (", d1, ")");
  const Shape& sz = x.sizes();
  const Shape& st = x.strides();
  const int64_t len = std::max<int64_t>(
      0, offset >= 0 ? std::min(sz[d1], sz[d2] - offset) : std::min(sz[d1] + offset, sz[d2]));
  int64_t start = x.storage_offset();
  if (len > 0) start += offset >= 0 ? offset * st[d2] : -offset * st[d1];
  Shape sizes, strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(sz[d]);
    strides.push_back(st[d]);
  }
  sizes.push_back(len);
  strides.push_back(st[d1] + st[d2]);
  return as_view(
      x, std::move(sizes), std::move(strides), start, "DiagonalBackward0",
      scatter_back(x, [offset, d1, d2](const Tensor& r) { return diagonal(r, offset, d1, d2); }));
}

Tensor Tensor::expand(const Shape& target) const {
  EMBER_CHECK_KIND(Shape, target.size() >= sizes().size(),
                   "[expand] the number of sizes provided (", target.size(),
                   ") must be greater or equal to the number of dimensions in the "
                   "tensor (",
                   dim(), ")");
  size_t lead = target.size() - sizes().size();
  Shape sizes(target.size()), strides(target.size());
  for (size_t i = 0; i < target.size(); ++i) {
    if (i < lead) {
      EMBER_CHECK_KIND(Shape, target[i] >= 0, "[expand] the expanded size ", target[i],
                       " is not allowed in a leading, non-existing dimension ", i);
      sizes[i] = target[i];
      strides[i] = 0;
      continue;
    }
    int64_t have = this->sizes()[i - lead];
    EMBER_CHECK_KIND(Shape, target[i] >= -1, "[expand] invalid size ", target[i], " in ",
                     shape_str(target), "; sizes must be >= 0, or -1 to keep a dim");
    int64_t want = target[i] == -1 ? have : target[i];
    EMBER_CHECK_KIND(Shape, want == have || have == 1, "[expand] the expanded size of the tensor (",
                     want, ") must match the existing size (", have,
                     ") at non-singleton dimension ", i, ".  Target sizes: ", shape_str(target),
                     ".  Tensor sizes: ", shape_str(this->sizes()));
    sizes[i] = want;
    strides[i] = want == have ? this->strides()[i - lead] : 0;
  }
  return as_view(*this, std::move(sizes), std::move(strides), storage_offset(), "ExpandBackward0",
                 [original = this->sizes()](const Tensor& g) -> std::vector<Tensor> {
                   return {autograd::sum_to(g, original)};
                 });
}

}  // namespace ember
