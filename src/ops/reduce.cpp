// ops/reduce.cpp: reductions over all or given dims -- output dtypes, keepdim, empty inputs.
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
  Tensor out = make_tensor(kept, is_arg ? kInt64 : dtype, x.device());
  if (out.numel() > 0) backend_for(x).reduce(op, view_of(out), view_of(src), mask);
  return keepdim ? out : out.view(squeezed);
}

DType sum_dtype(const Tensor& x, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_integral(x.dtype(), true) ? kInt64 : x.dtype();
}

void check_float(const char* name, const Tensor& x) {
  EMBER_CHECK_KIND(DType, x.is_floating_point(), "[", name,
                   "] could not infer output dtype. Input dtype must be either a floating point or "
                   "complex dtype. Got: ", x.dtype(), "; convert with .to(ember::kFloat32)");
}

Shape single_dim(const char* name, const Tensor& x, int64_t dim) {
  return {wrap_dim(name, dim, x.dim())};
}

}  // namespace

Tensor sum(const Tensor& x, std::optional<DType> dtype) {
  return reduce(ReduceOp::Sum, "sum", x, {}, false, sum_dtype(x, dtype));
}
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  return reduce(ReduceOp::Sum, "sum", x, dims, keepdim, sum_dtype(x, dtype));
}
Tensor mean(const Tensor& x) { return mean(x, {}, false); }
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) {
  check_float("mean", x);
  Tensor s = reduce(ReduceOp::Sum, "mean", x, dims, keepdim, x.dtype());
  int64_t count = s.numel() == 0 ? 0 : x.numel() / s.numel();
  return s.div_(static_cast<double>(count));
}
Tensor prod(const Tensor& x) { return reduce(ReduceOp::Prod, "prod", x, {}, false, sum_dtype(x, {})); }
Tensor prod(const Tensor& x, int64_t dim, bool keepdim) {
  return reduce(ReduceOp::Prod, "prod", x, single_dim("prod", x, dim), keepdim, sum_dtype(x, {}));
}
Tensor max(const Tensor& x) { return reduce(ReduceOp::Max, "max", x, {}, false, x.dtype()); }
Tensor min(const Tensor& x) { return reduce(ReduceOp::Min, "min", x, {}, false, x.dtype()); }
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  Shape d = single_dim("max", x, dim);
  return {reduce(ReduceOp::Max, "max", x, d, keepdim, x.dtype()),
          reduce(ReduceOp::ArgMax, "max", x, d, keepdim, x.dtype())};
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  Shape d = single_dim("min", x, dim);
  return {reduce(ReduceOp::Min, "min", x, d, keepdim, x.dtype()),
          reduce(ReduceOp::ArgMin, "min", x, d, keepdim, x.dtype())};
}
Tensor amax(const Tensor& x, const Shape& dims, bool keepdim) {
  return reduce(ReduceOp::Max, "amax", x, dims, keepdim, x.dtype());
}
Tensor amin(const Tensor& x, const Shape& dims, bool keepdim) {
  return reduce(ReduceOp::Min, "amin", x, dims, keepdim, x.dtype());
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
