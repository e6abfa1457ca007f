// ops/reduce.cpp: reductions over all or given dims -- output dtypes, keepdim, empty inputs.
#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

// Reduces the dims in `dims` (all when empty) of x, computed in dtype `dtype`.
Tensor reduce(ReduceOp op, const char* name, const Tensor& x, const Shape& dims, bool keepdim,
              DType dtype) {
  uint64_t mask = dims_mask(name, dims, x.dim());
  Shape kept = x.sizes(), squeezed;
  int64_t n_red = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (mask >> d & 1) {
      n_red *= kept[d];
      kept[d] = 1;
    } else {
      squeezed.push_back(kept[d]);
    }
  }
  bool needs_values = op != ReduceOp::Sum && op != ReduceOp::Prod;
  EMBER_CHECK_KIND(Index, !(needs_values && n_red == 0 && shape_numel(kept) > 0), "[", name,
                   "] Expected reduction dim to have non-zero size: the input of shape ",
                   shape_str(x.sizes()), " has no elements to reduce",
                   dims.empty() ? "; specify the reduction dim with the 'dim' argument" : "");
  bool is_arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  Tensor src = x.to(dtype);
  // The result is allocated in its final shape; the kernel sees it with the reduced dims kept
  // (size 1), which is the same memory layout.
  Tensor out = make_tensor(keepdim ? kept : squeezed, is_arg ? kInt64 : dtype, x.device());
  Shape kept_strides = contiguous_strides(kept);
  View dst{out.impl().data(), kept, kept_strides, out.dtype()};
  if (out.numel() > 0) backend_for(x).reduce(op, dst, view_of(src), mask);
  return out;
}

DType sum_dtype(const Tensor& x, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_integral(x.dtype(), true) ? kInt64 : x.dtype();
}

void check_float(const char* name, const Tensor& x) {
  EMBER_CHECK_KIND(DType, x.is_floating_point(), "[", name,
                   "] could not infer output dtype. Input dtype must be either a floating point or "
                   "complex dtype. Got: ",
                   x.dtype(), "; convert with .to(ember::kFloat32)");
}

Shape single_dim(const char* name, const Tensor& x, int64_t dim) {
  return {wrap_dim(name, dim, x.dim())};
}

// A reduced tensor (keepdim or not) brought back to x's shape by broadcasting.
Tensor expand_back(const Tensor& r, const Shape& sizes, uint64_t mask, bool keepdim) {
  Tensor out = r;
  if (!keepdim)
    for (size_t d = 0; d < sizes.size(); ++d)
      if (mask >> d & 1) out = out.unsqueeze(static_cast<int64_t>(d));
  return out.expand(sizes);
}

// Records sum/mean: the gradient is spread evenly over each reduced group (scaled for mean).
void record_sum(const char* name, const Tensor& x, const Shape& dims, bool keepdim,
                const Tensor& out, double scale) {
  if (!autograd::needs_grad({&x})) return;
  uint64_t mask = dims_mask(name, dims, x.dim());
  autograd::record(name, {&x}, out,
                   [sizes = x.sizes(), dtype = x.dtype(), mask, keepdim, scale](const Tensor& g) {
                     Tensor r = expand_back(g, sizes, mask, keepdim).to(dtype);
                     return std::vector<Tensor>{scale == 1 ? r : r * scale};
                   });
}

// Records amax/amin/max/min over all or several dims: ties share the gradient evenly.
void record_extreme(const char* name, const Tensor& x, const Shape& dims, bool keepdim,
                    const Tensor& out) {
  if (!autograd::needs_grad({&x})) return;
  uint64_t mask = dims_mask(name, dims, x.dim());
  autograd::record(
      name, {&x}, out,
      [sx = autograd::SavedTensor(x), sy = autograd::SavedTensor(out, true), mask,
       keepdim](const Tensor& g) {
        Tensor x = sx.unpack();
        Tensor hit = (x == expand_back(sy.unpack(), x.sizes(), mask, keepdim)).to(x.dtype());
        Shape all;
        for (int64_t d = 0; d < x.dim(); ++d)
          if (mask >> d & 1) all.push_back(d);
        Tensor count = all.empty() ? hit : sum(hit, all, true);
        return std::vector<Tensor>{expand_back(g, x.sizes(), mask, keepdim) * hit / count};
      });
}

// Records max/min along one dim: the gradient goes to the selected index.
void record_indexed(const char* name, const Tensor& x, int64_t dim, bool keepdim,
                    const Tensor& values, const Tensor& indices) {
  if (!autograd::needs_grad({&x})) return;
  autograd::record(name, {&x}, values,
                   [sizes = x.sizes(), dtype = x.dtype(), device = x.device(), dim, keepdim,
                    idx = indices](const Tensor& g) {
                     Tensor gk = keepdim ? g : g.unsqueeze(dim);
                     Tensor ik = keepdim ? idx : idx.unsqueeze(dim);
                     Tensor r = zeros(sizes, {.dtype = dtype, .device = device});
                     return std::vector<Tensor>{r.scatter_add_(dim, ik, gk)};
                   });
}

// Records prod: d/dx_i = product of the others, exact also when the group has zeros.
void record_prod(const Tensor& x, const Shape& dims, bool keepdim, const Tensor& out) {
  if (!autograd::needs_grad({&x})) return;
  uint64_t mask = dims_mask("prod", dims, x.dim());
  autograd::record(
      "ProdBackward0", {&x}, out,
      [sx = autograd::SavedTensor(x), sy = autograd::SavedTensor(out, true), mask, keepdim,
       dims](const Tensor& g) {
        Tensor x = sx.unpack();
        Tensor gk = expand_back(g, x.sizes(), mask, keepdim);
        Tensor yk = expand_back(sy.unpack(), x.sizes(), mask, keepdim);
        Tensor zero = x == 0;
        Tensor nonzero = where(zero, 1.0, x);
        Tensor zeros_in_group = expand_back(sum(zero, dims, true), x.sizes(), mask, true);
        Tensor others = expand_back(reduce(ReduceOp::Prod, "prod", nonzero, dims, true, x.dtype()),
                                    x.sizes(), mask, true);
        Tensor at_zero = where(zeros_in_group == 1, gk * others, 0.0);
        return std::vector<Tensor>{where(zero, at_zero, gk * yk / nonzero)};
      });
}

}  // namespace

Tensor sum(const Tensor& x, std::optional<DType> dtype) {
  return sum(x, {}, false, dtype);
}
Tensor sum(const Tensor& x0, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  const Tensor x = dtype ? x0 : autocast_float32(x0);
  Tensor out = reduce(ReduceOp::Sum, "sum", x, dims, keepdim, sum_dtype(x, dtype));
  record_sum("SumBackward1", x, dims, keepdim, out, 1.0);
  return out;
}
Tensor mean(const Tensor& x) {
  return mean(x, {}, false);
}
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) {
  check_float("mean", x);
  Tensor s = reduce(ReduceOp::Sum, "mean", x, dims, keepdim, x.dtype());
  int64_t count = s.numel() == 0 ? 0 : x.numel() / s.numel();
  {
    NoGradGuard no_grad;
    s.div_(static_cast<double>(count));
  }
  record_sum("MeanBackward1", x, dims, keepdim, s, 1.0 / static_cast<double>(count));
  return s;
}
Tensor prod(const Tensor& x0) {
  const Tensor x = autocast_float32(x0);
  Tensor out = reduce(ReduceOp::Prod, "prod", x, {}, false, sum_dtype(x, {}));
  record_prod(x, {}, false, out);
  return out;
}
Tensor prod(const Tensor& x0, int64_t dim, bool keepdim) {
  const Tensor x = autocast_float32(x0);
  Shape d = single_dim("prod", x, dim);
  Tensor out = reduce(ReduceOp::Prod, "prod", x, d, keepdim, sum_dtype(x, {}));
  record_prod(x, d, keepdim, out);
  return out;
}
Tensor max(const Tensor& x) {
  Tensor out = reduce(ReduceOp::Max, "max", x, {}, false, x.dtype());
  record_extreme("MaxBackward1", x, {}, false, out);
  return out;
}
Tensor min(const Tensor& x) {
  Tensor out = reduce(ReduceOp::Min, "min", x, {}, false, x.dtype());
  record_extreme("MinBackward1", x, {}, false, out);
  return out;
}
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  Shape d = single_dim("max", x, dim);
  Tensor values = reduce(ReduceOp::Max, "max", x, d, keepdim, x.dtype());
  Tensor indices = reduce(ReduceOp::ArgMax, "max", x, d, keepdim, x.dtype());
  record_indexed("MaxBackward0", x, d[0], keepdim, values, indices);
  return {values, indices};
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  Shape d = single_dim("min", x, dim);
  Tensor values = reduce(ReduceOp::Min, "min", x, d, keepdim, x.dtype());
  Tensor indices = reduce(ReduceOp::ArgMin, "min", x, d, keepdim, x.dtype());
  record_indexed("MinBackward0", x, d[0], keepdim, values, indices);
  return {values, indices};
}
Tensor amax(const Tensor& x, const Shape& dims, bool keepdim) {
  Tensor out = reduce(ReduceOp::Max, "amax", x, dims, keepdim, x.dtype());
  record_extreme("AmaxBackward0", x, dims, keepdim, out);
  return out;
}
Tensor amin(const Tensor& x, const Shape& dims, bool keepdim) {
  Tensor out = reduce(ReduceOp::Min, "amin", x, dims, keepdim, x.dtype());
  record_extreme("AminBackward0", x, dims, keepdim, out);
  return out;
}

namespace {
Tensor arg_reduce(ReduceOp op, const char* name, const Tensor& x, std::optional<int64_t> dim,
                  bool keepdim) {
  if (dim) return reduce(op, name, x, single_dim(name, x, *dim), keepdim, x.dtype());
  Tensor r = reduce(op, name, x.reshape({-1}), {0}, false, x.dtype());
  return keepdim ? r.view(Shape(x.dim(), 1)) : r;
}
}  // namespace

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce(ReduceOp::ArgMax, "argmax", x, dim, keepdim);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce(ReduceOp::ArgMin, "argmin", x, dim, keepdim);
}

}  // namespace ember
