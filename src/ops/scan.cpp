// ops/scan.cpp: the scans along a dim -- cumsum, cumprod (integers and bool in int64 unless a
// dtype is given), cummax, cummin (values and the index each came from, a later equal element
// and every NaN taking over, as PyTorch), logcumsumexp (floating only) -- on the backend's scan,
// and their gradients: the reversed cumulative sum for cumsum, PyTorch's zero-aware formula for
// cumprod, the gradient put back at the indices for cummax/cummin, TensorFlow's sign-split
// reversed log-sum-exp for logcumsumexp.
#include <limits>

#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

// The backend scan of contiguous src along d into a new tensor (and the positions for Max/Min).
Tensor run_scan(ScanOp op, const Tensor& src, int64_t d, Tensor* positions = nullptr) {
  Tensor out = make_tensor(src.sizes(), src.dtype(), src.device());
  View at{};
  if (positions) {
    *positions = make_tensor(src.sizes(), kInt64, src.device());
    at = view_of(*positions);
  }
  if (out.numel() > 0) backend_for(src).scan(op, view_of(out), at, view_of(src), d);
  return out;
}

// The reversed cumulative sum along d: sum over j >= i.
Tensor reverse_cumsum(const Tensor& t, int64_t d) {
  return flip(cumsum(flip(t, {d}), d), {d});
}

// cumsum's and cumprod's scan: floating types stay, integers and bool go to int64 (or dtype).
struct Accumulated {
  Tensor src, out;  // the scanned input (recorded conversions of x) and the result
  int64_t d;
  bool scalar;
};
Accumulated accumulate(ScanOp op, const char* name, const Tensor& x0, int64_t dim,
                       std::optional<DType> dtype) {
  const Tensor x = autocast_float32(x0);  // both are on autocast's float32 list
  const int64_t d = wrap_dim_of(name, x, dim);
  const DType to = dtype.value_or(is_floating_point(x.dtype()) ? x.dtype() : kInt64);
  EMBER_CHECK_KIND(DType, to != kBool, "[", name, "] dtype bool cannot hold the result; use int64");
  Tensor src = x.to(to).contiguous();
  return {src, run_scan(op, src, d), d, x.dim() == 0};
}

// d(cumprod)/dx with zeros in x: before a line's first zero, the reversed sum of g * out over x;
// at the first zero z, out[z - 1] times the reversed sum of g times the products after z; after
// it, 0 (every product there holds x[z]).
Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& out, int64_t d) {
  const Tensor zero = eq(x, 0);
  const Tensor zeros_so_far = cumsum(zero, d);
  const Tensor before = eq(zeros_so_far, 0);
  const Tensor first = logical_and(zero, eq(zeros_so_far, 1));
  const Tensor grad_before = reverse_cumsum(g * out, d) / where(before, x, 1.0);
  const Tensor product_before = cumprod(where(before, x, 1.0), d);
  const Tensor product_after = cumprod(where(logical_or(before, first), 1.0, x), d);
  const Tensor at_first =
      product_before * reverse_cumsum(g * product_after * logical_not(before).to(g.dtype()), d);
  return where(before, grad_before, where(first, at_first, 0.0));
}

}  // namespace

Tensor cumsum(const Tensor& x0, int64_t dim, std::optional<DType> dtype) {
  auto [src, out, d, scalar] = accumulate(ScanOp::Sum, "cumsum", x0, dim, dtype);
  if (autograd::needs_grad({&src}) && out.is_floating_point()) {
    autograd::record("CumsumBackward0", {&src}, out, [d, scalar](const Tensor& g) {
      if (scalar) return std::vector<Tensor>{g};
      return std::vector<Tensor>{reverse_cumsum(g, d)};
    });
  }
  return out;
}

Tensor cumprod(const Tensor& x0, int64_t dim, std::optional<DType> dtype) {
  auto [src, out, d, scalar] = accumulate(ScanOp::Prod, "cumprod", x0, dim, dtype);
  if (autograd::needs_grad({&src}) && out.is_floating_point()) {
    autograd::record("CumprodBackward0", {&src}, out,
                     [sx = autograd::SavedTensor(src), so = autograd::SavedTensor(out, true), d,
                      scalar](const Tensor& g) {
                       if (scalar) return std::vector<Tensor>{g};
                       return std::vector<Tensor>{cumprod_backward(g, sx.unpack(), so.unpack(), d)};
                     });
  }
  return out;
}

namespace {

detail::TensorPair running_best(const char* op, const char* node, ScanOp kind, const Tensor& x,
                                int64_t dim) {
  const int64_t d = wrap_dim_of(op, x, dim);
  Tensor positions, values;
  {
    NoGradGuard no_grad;
    values = run_scan(kind, x.contiguous(), d, &positions);
  }
  record_pick(node, x, values, positions, d, false);
  return {values, positions};
}

}  // namespace

detail::TensorPair cummax(const Tensor& x, int64_t dim) {
  return running_best("cummax", "CummaxBackward0", ScanOp::Max, x, dim);
}
detail::TensorPair cummin(const Tensor& x, int64_t dim) {
  return running_best("cummin", "CumminBackward0", ScanOp::Min, x, dim);
}

Tensor logcumsumexp(const Tensor& x0, int64_t dim) {
  EMBER_CHECK_KIND(DType, x0.is_floating_point(), "[logcumsumexp] takes a floating tensor, got ",
                   x0.dtype(), "; convert it first, e.g. x.to(kFloat32)");
  const Tensor x = autocast_float32(x0).contiguous();
  const int64_t d = wrap_dim_of("logcumsumexp", x, dim);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = run_scan(ScanOp::LogSumExp, x, d);
  }
  if (autograd::needs_grad({&x})) {
    autograd::record("LogcumsumexpBackward0", {&x}, out,
                     [sx = autograd::SavedTensor(x), so = autograd::SavedTensor(out, true), d,
                      scalar = x.dim() == 0](const Tensor& g) {
                       if (scalar) return std::vector<Tensor>{g};
                       const Tensor xs = sx.unpack(), o = so.unpack();
                       const double ninf = -std::numeric_limits<double>::infinity();
                       auto reversed = [d](const Tensor& t) {
                         return flip(logcumsumexp(flip(t, {d}), d), {d});
                       };
                       // g split by sign, each side summed in log space so that nothing overflows.
                       const Tensor log_pos = where(gt(g, 0), log(g), ninf);
                       const Tensor log_neg = where(lt(g, 0), log(-g), ninf);
                       return std::vector<Tensor>{exp(reversed(log_pos - o) + xs) -
                                                  exp(reversed(log_neg - o) + xs)};
                     });
  }
  return out;
}

}  // namespace ember
