// ops/creation.cpp: tensors from values, filled tensors, ranges, and the _like forms.
#include <cmath>
#include <cstring>
#include <string>

#include "ops/op_helpers.h"

namespace ember {

namespace {

Tensor new_tensor(const Shape& shape, DType dtype, Device device) {
  for (int64_t s : shape)
    EMBER_CHECK_KIND(Shape, s >= 0, "[empty] Trying to create tensor with negative dimension ", s,
                     ": ", shape_str(shape));
  return make_tensor(shape, dtype, resolve_device(device));
}

// The shape along the first path (first element at every level), as torch.tensor infers it.
Shape first_path_shape(const NestedValues& v) {
  Shape shape;
  for (const NestedValues* p = &v; !p->is_scalar(); p = &p->list().front()) {
    shape.push_back(static_cast<int64_t>(p->list().size()));
    if (p->list().empty()) break;
  }
  return shape;
}

// Checks every path matches `shape` (numbers exactly at its depth) and notes the kinds of values.
void check_shape(const NestedValues& v, size_t depth, const Shape& shape, bool& any_float,
                 bool& any_int) {
  if (v.is_scalar()) {
    EMBER_CHECK_KIND(Shape, depth == shape.size(), "[tensor] expected a sequence at dim ", depth,
                     " but got a number; all rows must have the same nesting");
    any_float |= v.scalar().is_floating_point();
    any_int |= v.scalar().is_integral();
    return;
  }
  int64_t n = static_cast<int64_t>(v.list().size());
  EMBER_CHECK_KIND(Shape, depth < shape.size() && shape[depth] == n, "[tensor] expected ",
                   depth < shape.size() ? "sequence of length " + std::to_string(shape[depth])
                                        : std::string("a number"),
                   " at dim ", depth, " (got a sequence of length ", n, ")");
  for (const auto& child : v.list()) check_shape(child, depth + 1, shape, any_float, any_int);
}

template <class T>
void write_values(const NestedValues& v, T*& out) {
  if (v.is_scalar()) {
    *out++ = v.scalar().to<T>();
    return;
  }
  for (const auto& child : v.list()) write_values(child, out);
}

DType options_dtype(const TensorOptions& o) {
  return o.dtype.value_or(default_dtype());
}

// Applies options.requires_grad to a freshly made tensor.
Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad) t.requires_grad_();
  return t;
}

TensorOptions like_options(const Tensor& t, const std::optional<TensorOptions>& options) {
  if (options)
    return TensorOptions{options->dtype ? options->dtype : t.dtype(),
                         options->device ? options->device : t.device(), options->requires_grad};
  return TensorOptions{t.dtype(), t.device(), false};
}

}  // namespace

Tensor tensor(const NestedValues& values, const TensorOptions& options) {
  Shape shape = first_path_shape(values);
  bool any_float = false, any_int = false;
  check_shape(values, 0, shape, any_float, any_int);
  // An empty list gives float32, as torch.tensor([]) does.
  DType inferred = any_float || !(any_int || shape_numel(shape) > 0) ? default_dtype()
                   : any_int                                         ? kInt64
                                                                     : kBool;
  // Values go straight into the requested dtype: no rounding through the inferred one first.
  DType dtype = options.dtype.value_or(inferred);
  Tensor host = make_tensor(shape, dtype, Device(kCPU));
  visit_dtype(dtype, [&]<class T>() {
    T* p = static_cast<T*>(host.impl().data());
    write_values(values, p);
  });
  return finish(host.to(options.target_device()), options);
}

Tensor from_blob_copy(const void* data, DType dtype, const Shape& shape,
                      const TensorOptions& options) {
  Tensor host = new_tensor(shape, dtype, Device(kCPU));
  if (host.nbytes()) std::memcpy(host.impl().data(), data, host.nbytes());
  return finish(host.to(options.target_device(), options.dtype.value_or(dtype)), options);
}

Tensor scalar_tensor(const Scalar& value, const TensorOptions& options) {
  return full({}, value,
              {.dtype = options.dtype.value_or(default_dtype()),
               .device = options.device,
               .requires_grad = options.requires_grad});
}

Tensor empty(const Shape& shape, const TensorOptions& options) {
  return finish(new_tensor(shape, options_dtype(options), options.target_device()), options);
}
Tensor zeros(const Shape& shape, const TensorOptions& options) {
  return finish(new_tensor(shape, options_dtype(options), options.target_device()).fill_(0),
                options);
}
Tensor ones(const Shape& shape, const TensorOptions& options) {
  return finish(new_tensor(shape, options_dtype(options), options.target_device()).fill_(1),
                options);
}
Tensor full(const Shape& shape, const Scalar& value, const TensorOptions& options) {
  DType inferred = value.is_floating_point() ? default_dtype() : value.dtype();
  return finish(
      new_tensor(shape, options.dtype.value_or(inferred), options.target_device()).fill_(value),
      options);
}

Tensor eye(int64_t n, std::optional<int64_t> m0, const TensorOptions& options) {
  int64_t m = m0.value_or(n);
  EMBER_CHECK(n >= 0 && m >= 0, "[eye] n and m must be non-negative, got ", n, " and ", m);
  Tensor out = zeros({n, m}, {.dtype = options.dtype, .device = options.device});
  if (n > 0 && m > 0)
    out.view({-1}).slice(0, 0, std::nullopt, m + 1).narrow(0, 0, std::min(n, m)).fill_(1);
  return finish(out, options);
}

Tensor arange(const Scalar& end, const TensorOptions& options) {
  return arange(0, end, 1, options);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options) {
  bool all_int =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  DType dtype = options.dtype.value_or(all_int ? kInt64 : default_dtype());
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  EMBER_CHECK(st != 0, "[arange] step must be nonzero");
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), "[arange] unsupported range: ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
              "[arange] upper bound and larger bound inconsistent with step sign (start ", start,
              ", end ", end, ", step ", step, ")");
  int64_t n =
      all_int ? (end.to_int() - start.to_int() + step.to_int() - (st > 0 ? 1 : -1)) / step.to_int()
              : static_cast<int64_t>(std::ceil((e - s) / st));
  Tensor host = make_tensor({n}, dtype, Device(kCPU));
  visit_dtype(dtype, [&]<class T>() {
    T* p = static_cast<T*>(host.impl().data());
    for (int64_t i = 0; i < n; ++i) {
      if (all_int)
        p[i] = static_cast<T>(start.to_int() + i * step.to_int());
      else
        p[i] = static_cast<T>(s + static_cast<double>(i) * st);
    }
  });
  return finish(host.to(options.target_device()), options);
}

Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options) {
  EMBER_CHECK(steps >= 0, "[linspace] number of steps must be non-negative, got ", steps);
  DType dtype = options.dtype.value_or(default_dtype());
  Tensor host = make_tensor({steps}, kFloat64, Device(kCPU));
  double* p = static_cast<double*>(host.impl().data());
  double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0;
  for (int64_t i = 0; i < steps; ++i)  // from both ends, so the last value is exactly `end`
    p[i] = i < steps / 2 ? start + step * static_cast<double>(i)
                         : end - step * static_cast<double>(steps - 1 - i);
  if (steps == 1) p[0] = start;  // torch.linspace(start, end, 1) is [start], not [end]
  return finish(host.to(options.target_device(), dtype), options);
}

Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o) {
  return empty(t.sizes(), like_options(t, o));
}
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o) {
  return zeros(t.sizes(), like_options(t, o));
}
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o) {
  return ones(t.sizes(), like_options(t, o));
}
Tensor full_like(const Tensor& t, const Scalar& value, std::optional<TensorOptions> o) {
  return full(t.sizes(), value, like_options(t, o));
}
Tensor rand_like(const Tensor& t, std::optional<TensorOptions> o) {
  return rand(t.sizes(), like_options(t, o));
}
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> o) {
  return randn(t.sizes(), like_options(t, o));
}
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, std::optional<TensorOptions> o) {
  return randint(low, high, t.sizes(), like_options(t, o));
}

}  // namespace ember
