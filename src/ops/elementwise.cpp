// ops/elementwise.cpp: element-wise ops -- type promotion, broadcasting, device checks, in-place
// forms and operators; the arithmetic itself is the backends' (from the op tables).
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

// --- shared helpers

Tensor wrap_scalar(const Scalar& s, Device device) {
  return wrap_scalar_as(s, s.dtype(), device);
}

Tensor wrap_scalar_as(const Scalar& s, DType dtype, Device device) {
  Tensor t = make_tensor({}, dtype, device);
  if (device.is_cpu()) {
    visit_dtype(dtype, [&]<class T>() { *static_cast<T*>(t.impl().data()) = s.to<T>(); });
  } else {
    backend_for(device.type()).fill(view_of(t), s);
  }
  t.impl().wrapped_number = true;
  return t;
}

namespace {
std::optional<DType> promote_opt(std::optional<DType> a, DType b) {
  return a ? promote_types(*a, b) : b;
}
// combine_categories: the higher-priority group wins unless the lower one is of a higher kind.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower || is_floating_point(*higher)) return higher;
  if (*higher == kBool || is_floating_point(*lower)) return promote_types(*higher, *lower);
  return higher;
}
}  // namespace

DType result_type_of(std::initializer_list<const Tensor*> tensors) {
  std::optional<DType> dim, zero, wrapped;
  for (const Tensor* t : tensors) {
    const TensorImpl& i = t->impl();
    if (i.wrapped_number) {
      wrapped = promote_opt(wrapped, is_floating_point(i.dtype) ? default_dtype() : i.dtype);
    } else if (i.sizes.empty()) {
      zero = promote_opt(zero, i.dtype);
    } else {
      dim = promote_opt(dim, i.dtype);
    }
  }
  return *combine(dim, combine(zero, wrapped));
}

DType result_type(const Tensor& a, const Tensor& b) {
  return result_type_of({&a, &b});
}
// As result_type_of with s wrapped, without making s a tensor.
DType result_type(const Tensor& t, const Scalar& s) {
  DType wrapped = s.is_floating_point() ? default_dtype() : s.dtype();
  const TensorImpl& i = t.impl();
  if (i.wrapped_number)
    return promote_types(is_floating_point(i.dtype) ? default_dtype() : i.dtype, wrapped);
  return *combine(i.dtype, wrapped);
}
Shape broadcast_shapes(const Shape& a, const Shape& b) {
  return broadcast_shape("broadcast_shapes", a, b);
}

Tensor on_device(const Tensor& t, Device device) {
  if (t.device() == device) return t;
  Tensor moved = t.to(device);
  moved.impl().wrapped_number = t.impl().wrapped_number;
  return moved;
}

Device operand_device(const char* op, std::initializer_list<const Tensor*> tensors) {
  const Tensor* main = nullptr;
  for (const Tensor* t : tensors)
    if (!(t->is_cpu() && t->dim() == 0)) {
      main = t;
      break;
    }
  if (!main) return Device(kCPU);
  Device d = main->device();
  for (const Tensor* t : tensors) {
    if (t->device() != d && !(t->is_cpu() && t->dim() == 0)) return common_device(op, tensors);
  }
  return d;
}

void check_writable(const char* op, const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    EMBER_CHECK(t.strides()[d] != 0 || t.sizes()[d] <= 1, "[", op,
                "] unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation.");
}

// --- binary

namespace {

void check_integral(OpKind kind, const char* op, DType dtype) {
  EMBER_CHECK_KIND(DType, kind != OpKind::Integral || !is_floating_point(dtype), "[", op,
                   "] takes integer or bool tensors, got ", dtype,
                   "; convert with .to(kInt64) first if the values are whole numbers");
}

DType compute_dtype(BinaryOp op, DType common) {
  check_integral(op_kind(op), op_name(op), common);
  if (op_kind(op) == OpKind::Float && !is_floating_point(common)) return default_dtype();
  return common;
}

void check_bool_ops(BinaryOp op, DType common) {
  EMBER_CHECK_KIND(DType, !(op == BinaryOp::Sub && common == kBool),
                   "[sub] Subtraction, the `-` operator, with two bool tensors is not supported. "
                   "Use the `^` or `logical_xor()` operator instead.");
}

// t on dev as dtype: t itself when it already is (no handle copy), else a converted copy kept
// alive in `holder`.
const Tensor& as_operand(const Tensor& t, Device dev, DType dtype, Tensor& holder) {
  if (t.dtype() == dtype && t.device() == dev) return t;
  holder = on_device(t, dev).to(dtype);
  return holder;
}

}  // namespace

// Two tensors of one shape, dtype and device, neither a wrapped number: nothing to promote, move
// or broadcast -- the common case, taken without the general machinery.
Tensor binary_same_shape(BinaryOp op, const Tensor& a, const Tensor& b) {
  DType common = compute_dtype(op, a.dtype());
  OpKind kind = op_kind(op);
  if (common != a.dtype() || (op == BinaryOp::Sub && common == kBool)) return Tensor();
  Tensor out = make_tensor(
      a.sizes(), kind == OpKind::Compare || kind == OpKind::Logical ? kBool : common, a.device());
  if (out.numel() == 0) return out;
  backend_for(a.device().type()).binary(op, view_of(out), view_of(a), view_of(b));
  record_binary(op, a, b, a, b, out);
  return out;
}

Tensor binary_op(BinaryOp op, const Tensor& a0, const Tensor& b0) {
  const TensorImpl &ia = a0.impl(), &ib = b0.impl();
  if (ia.dtype == ib.dtype && !ia.wrapped_number && !ib.wrapped_number &&
      ia.storage->device() == ib.storage->device() && ia.sizes == ib.sizes) {
    if (Tensor out = binary_same_shape(op, a0, b0); out.defined()) return out;
  }
  const char* name = op_name(op);
  Device dev = operand_device(name, {&a0, &b0});
  DType common = compute_dtype(op, result_type_of({&a0, &b0}));
  check_bool_ops(op, common);
  OpKind kind = op_kind(op);
  DType out_dtype = kind == OpKind::Compare || kind == OpKind::Logical ? kBool : common;
  Tensor a_moved, b_moved;
  const Tensor& a = as_operand(a0, dev, common, a_moved);
  const Tensor& b = as_operand(b0, dev, common, b_moved);
  Shape broadcast;
  const Shape& shape = a.sizes() == b.sizes()
                           ? a.sizes()
                           : (broadcast = broadcast_shape(name, a.sizes(), b.sizes()));
  Tensor out = make_tensor(shape, out_dtype, dev);
  if (out.numel() == 0) return out;
  BroadcastView va(a, shape), vb(b, shape);
  backend_for(dev.type()).binary(op, view_of(out), va.view, vb.view);
  record_binary(op, a0, b0, a, b, out);
  return out;
}

namespace {

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  return binary_op(op, a, b);
}
// The scalar goes in as a wrapped number already of the result type, which leaves that type
// unchanged and spares a conversion.
Tensor binary(BinaryOp op, const Tensor& a, const Scalar& b) {
  return binary_op(op, a, wrap_scalar_as(b, result_type(a, b), a.device()));
}

// "add_" for Add: the in-place op's name, for messages and version checks.
const char* inplace_name(BinaryOp op) {
  static const auto names = [] {
    std::array<std::string, std::size(kBinaryNames)> n;
    for (size_t i = 0; i < n.size(); ++i) n[i] = std::string(kBinaryNames[i]) + "_";
    return n;
  }();
  return names[static_cast<size_t>(op)].c_str();
}

Tensor& binary_(BinaryOp op, Tensor& self, const Tensor& other0) {
  const char* name = op_name(op);
  const char* inplace = inplace_name(op);
  Device dev = operand_device(inplace, {&self, &other0});
  EMBER_CHECK_KIND(
      Device, dev == self.device(),
      "Expected all tensors to be on the same device, but found at least two devices, ",
      other0.device(), " and ", self.device(), "! (in ", name, "_)");
  DType common = compute_dtype(op, result_type_of({&self, &other0}));
  check_bool_ops(op, common);
  EMBER_CHECK_KIND(DType, can_cast(common, self.dtype()), "[", name, "_] result type ", common,
                   " can't be cast to the desired output type ", self.dtype(),
                   "; use the out-of-place ", name, "() instead");
  Shape shape = broadcast_shape(name, self.sizes(), other0.sizes());
  EMBER_CHECK_KIND(Shape, shape == self.sizes(), "[", name, "_] output with shape ",
                   shape_str(self.sizes()), " doesn't match the broadcast shape ",
                   shape_str(shape));
  check_writable(name, self);
  if (self.numel() == 0) return self;
  if (autograd::needs_grad({&self, &other0})) {
    // Differentiable in place: compute from a copy of the old value, then write it back.
    autograd::check_inplace(inplace, self);
    return self.copy_(binary(op, self.clone(), other0));
  }
  if (common != self.dtype()) return self.copy_(binary(op, self, other0));
  self.storage()->bump_version();
  Tensor moved;
  const Tensor& other = as_operand(other0, dev, common, moved);
  BroadcastView vo(other, shape);
  View vs = view_of(self);
  backend_for(dev.type()).binary(op, vs, vs, vo.view);
  return self;
}

// In place with a scalar: the scalar goes in as a wrapped number of the result type.
Tensor& binary_(BinaryOp op, Tensor& self, const Scalar& other) {
  return binary_(op, self, wrap_scalar_as(other, result_type(self, other), self.device()));
}

}  // namespace

namespace {
// The unary ops autocast computes in float32 (PyTorch's float32 list).
bool autocast_to_float32(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Log1p:
    case UnaryOp::Rsqrt:
    case UnaryOp::PowScalar:
    case UnaryOp::Acos:
    case UnaryOp::Asin:
    case UnaryOp::Cosh:
    case UnaryOp::Sinh:
    case UnaryOp::Tan:
    case UnaryOp::Erfinv:
    case UnaryOp::Expm1:
    case UnaryOp::Log2:
    case UnaryOp::Log10:
    case UnaryOp::Reciprocal:
    case UnaryOp::Softplus:
      return true;
    default:
      return false;
  }
}
}  // namespace

Tensor unary_op(UnaryOp op, const Tensor& x0, const UnaryParams& p, std::optional<DType> compute) {
  const Tensor x = autocast_to_float32(op) ? autocast_float32(x0) : x0;
  if (compute && !x.is_same(x0)) compute = promote_types(*compute, x.dtype());
  DType dtype = compute.value_or(x.dtype());
  check_integral(op_kind(op), op_name(op), dtype);
  if (op_kind(op) == OpKind::Float && !is_floating_point(dtype)) dtype = default_dtype();
  Tensor converted;
  const Tensor& xc = as_operand(x, x.device(), dtype, converted);
  Tensor out = make_tensor(x.sizes(), op_kind(op) == OpKind::Bool ? kBool : dtype, x.device());
  if (out.numel() == 0) return out;
  backend_for(x).unary(op, view_of(out), view_of(xc), p);
  record_unary(op, x, out, p);
  return out;
}

namespace {
Tensor unary(UnaryOp op, const Tensor& x, const UnaryParams& p = {},
             std::optional<DType> compute = std::nullopt) {
  return unary_op(op, x, p, compute);
}
}  // namespace

namespace {
// alpha must not turn an integer op into a float one (PyTorch's rule).
void check_alpha(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  EMBER_CHECK_KIND(DType, !alpha.is_floating_point() || is_floating_point(result_type(a, b)), "[",
                   op,
                   "] For integral input tensors, argument alpha must not be a floating point "
                   "number.");
}
}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (alpha.to_double() == 1 && !alpha.is_bool()) return binary(BinaryOp::Add, a, b);
  check_alpha("add", a, b, alpha);
  return binary(BinaryOp::Add, a, binary(BinaryOp::Mul, b, alpha));
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_bool_ops(BinaryOp::Sub, result_type(a, b));
  if (alpha.to_double() == 1 && !alpha.is_bool()) return binary(BinaryOp::Sub, a, b);
  check_alpha("sub", a, b, alpha);
  return binary(BinaryOp::Sub, a, binary(BinaryOp::Mul, b, alpha));
}
Tensor pow(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::Pow, autocast_float32(a), autocast_float32(b));
}
Tensor pow(const Scalar& a, const Tensor& b) {
  return binary(BinaryOp::Pow, wrap_scalar(a, b.device()), b);
}
Tensor pow(const Tensor& x, const Scalar& e) {
  DType dtype = result_type(x, e);
  EMBER_CHECK(!(is_integral(dtype, true) && e.is_integral() && e.to_int() < 0),
              "[pow] Integers to negative integer powers are not allowed.");
  UnaryParams p{.a = e.to_double(), .has_a = true};
  return unary(UnaryOp::PowScalar, x, p, dtype);
}
// The Scalar overloads: the scalar is a wrapped number, as in `a + 2.0`.
Tensor add(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Add, a, b);
}
Tensor sub(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Sub, a, b);
}
Tensor mul(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Mul, a, b);
}
Tensor div(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Div, a, b);
}
Tensor eq(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Eq, a, b);
}
Tensor ne(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Ne, a, b);
}
Tensor lt(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Lt, a, b);
}
Tensor le(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Le, a, b);
}
Tensor gt(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Gt, a, b);
}
Tensor ge(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::Ge, a, b);
}

// --- unary

Tensor neg(const Tensor& x) {
  EMBER_CHECK_KIND(
      DType, x.dtype() != kBool,
      "[neg] Negation, the `-` operator, on a bool tensor is not supported. If you are "
      "trying to invert a mask, use the `!` operator or logical_not() instead.");
  return unary(UnaryOp::Neg, x);
}
Tensor gelu(const Tensor& x, const std::string& approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh",
              "[gelu] approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
  return unary(UnaryOp::Gelu, x, UnaryParams{.a = approximate == "tanh" ? 1.0 : 0.0});
}
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return unary(UnaryOp::LeakyRelu, x, UnaryParams{.a = negative_slope});
}

namespace {
UnaryParams clamp_params(const Tensor& x, const std::optional<Scalar>& lo,
                         const std::optional<Scalar>& hi, DType* dtype) {
  EMBER_CHECK(lo || hi, "[clamp] At least one of 'min' or 'max' must not be None");
  DType t = x.dtype();
  if (lo) t = promote_types(t, result_type(x, *lo));
  if (hi) t = promote_types(t, result_type(x, *hi));
  *dtype = t;
  return UnaryParams{.a = lo ? lo->to_double() : 0,
                     .b = hi ? hi->to_double() : 0,
                     .has_a = lo.has_value(),
                     .has_b = hi.has_value()};
}
}  // namespace

Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  DType dtype;
  UnaryParams p = clamp_params(x, lo, hi, &dtype);
  return unary(UnaryOp::Clamp, x, p, dtype);
}

Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  DType dtype;
  UnaryParams p = clamp_params(*this, lo, hi, &dtype);
  EMBER_CHECK_KIND(DType, can_cast(dtype, this->dtype()), "[clamp_] result type ", dtype,
                   " can't be cast to the desired output type ", this->dtype());
  check_writable("clamp_", *this);
  if (numel() == 0) return *this;
  if (autograd::needs_grad({this})) {
    autograd::check_inplace("clamp_", *this);
    return copy_(unary(UnaryOp::Clamp, clone(), p, dtype));
  }
  storage()->bump_version();
  View v = view_of(*this);
  backend_for(*this).unary(UnaryOp::Clamp, v, v, p);
  return *this;
}

// --- the public functions of the .def entries marked `fn`: the op on its operands, nothing else.
#define EMBER_UNARY_FORM_fn(Name, name) \
  Tensor name(const Tensor& x) {        \
    return unary(UnaryOp::Name, x);     \
  }
#define EMBER_UNARY_FORM_own(Name, name)
#define EMBER_UNARY(Name, name, Fn, kind, form, ...) EMBER_UNARY_FORM_##form(Name, name)
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
#undef EMBER_UNARY_FORM_fn
#undef EMBER_UNARY_FORM_own
#define EMBER_BINARY_FORM_fn(Name, name)          \
  Tensor name(const Tensor& a, const Tensor& b) { \
    return binary(BinaryOp::Name, a, b);          \
  }
#define EMBER_BINARY_FORM_own(Name, name)
#define EMBER_BINARY_FORM_internal(Name, name)
#define EMBER_BINARY(Name, name, Fn, kind, form, ...) EMBER_BINARY_FORM_##form(Name, name)
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
#undef EMBER_BINARY_FORM_fn
#undef EMBER_BINARY_FORM_own
#undef EMBER_BINARY_FORM_internal

// --- activations with parameters
Tensor softplus(const Tensor& x, double beta, double threshold) {
  EMBER_CHECK_KIND(Value, beta != 0, "[softplus] beta must not be 0");
  return unary(UnaryOp::Softplus, x, UnaryParams{.a = beta, .b = threshold});
}
Tensor elu(const Tensor& x, double alpha) {
  return unary(UnaryOp::Elu, x, UnaryParams{.a = alpha});
}
Tensor celu(const Tensor& x, double alpha) {
  EMBER_CHECK_KIND(Value, alpha != 0, "[celu] ZeroDivisionError: alpha cannot be 0 for CELU");
  return unary(UnaryOp::Celu, x, UnaryParams{.a = alpha});
}
Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  EMBER_CHECK_KIND(Value, min_val <= max_val,
                   "[hardtanh] min_val cannot be greater than max_val, got ", min_val, " > ",
                   max_val);
  EMBER_CHECK_KIND(DType, x.dtype() != kBool, "[hardtanh] takes numbers, got a bool tensor");
  return unary(UnaryOp::Hardtanh, x, UnaryParams{.a = min_val, .b = max_val});
}
Tensor relu6(const Tensor& x) {
  return hardtanh(x, 0.0, 6.0);
}

// --- rounding, squares, NaN and infinities
Tensor square(const Tensor& x) {
  // PyTorch squares bool as pow(x, 2), in int64.
  return unary(UnaryOp::Square, x.dtype() == kBool ? x.to(kInt64) : x);
}
Tensor round(const Tensor& x, int64_t decimals) {
  EMBER_CHECK_KIND(DType, decimals == 0 || is_floating_point(x.dtype()),
                   "[round] decimals is only supported for floating-point tensors, got ",
                   x.dtype());
  const auto d = static_cast<double>(decimals);
  return unary(UnaryOp::Round, x, UnaryParams{.a = d, .b = std::pow(10.0, std::fabs(d))});
}
Tensor frac(const Tensor& x) {
  EMBER_CHECK_KIND(DType, is_floating_point(x.dtype()), "[frac] takes floating-point tensors, got ",
                   x.dtype(), " (integers have no fractional part)");
  return unary(UnaryOp::Frac, x);
}
Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  UnaryParams p{.a = nan.value_or(0.0)};
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (is_float_v<T>) {
      p.b = posinf.value_or(static_cast<double>(std::numeric_limits<T>::max()));
      p.c = neginf.value_or(static_cast<double>(std::numeric_limits<T>::lowest()));
    }
  });
  return unary(UnaryOp::NanToNum, x, p);
}

// --- integer-valued division and remainders, shifts
namespace {
// fmod, remainder and floor_divide: bool is refused, and an integer zero divisor is an error (as
// PyTorch's ZeroDivisionError), not an undefined value.
Tensor division(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = op_name(op);
  DType common = result_type(a, b);
  EMBER_CHECK_KIND(DType, common != kBool, "[", name, "] takes numbers, got bool tensors");
  if (!is_floating_point(common) && b.numel() > 0)
    EMBER_CHECK_KIND(Value, eq(b, 0).sum().item<int64_t>() == 0, "[", name,
                     "] ZeroDivisionError: integer division by zero; use floating-point "
                     "tensors for inf/nan results");
  return binary(op, a, b);
}
Tensor shift(BinaryOp op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK_KIND(DType, result_type(a, b) != kBool, "[", op_name(op),
                   "] takes integer tensors, got bool");
  return binary(op, a, b);
}
}  // namespace

Tensor fmod(const Tensor& a, const Tensor& b) {
  return division(BinaryOp::Fmod, a, b);
}
Tensor fmod(const Tensor& a, const Scalar& b) {
  return division(BinaryOp::Fmod, a, wrap_scalar_as(b, result_type(a, b), a.device()));
}
Tensor remainder(const Tensor& a, const Tensor& b) {
  return division(BinaryOp::Remainder, a, b);
}
Tensor remainder(const Tensor& a, const Scalar& b) {
  return division(BinaryOp::Remainder, a, wrap_scalar_as(b, result_type(a, b), a.device()));
}
Tensor floor_divide(const Tensor& a, const Tensor& b) {
  return division(BinaryOp::FloorDivide, a, b);
}
Tensor floor_divide(const Tensor& a, const Scalar& b) {
  return division(BinaryOp::FloorDivide, a, wrap_scalar_as(b, result_type(a, b), a.device()));
}
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b) {
  return shift(BinaryOp::BitwiseLeftShift, a, b);
}
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b) {
  return shift(BinaryOp::BitwiseRightShift, a, b);
}
Tensor bitwise_and(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::BitwiseAnd, a, b);
}
Tensor bitwise_or(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::BitwiseOr, a, b);
}
Tensor bitwise_xor(const Tensor& a, const Scalar& b) {
  return binary(BinaryOp::BitwiseXor, a, b);
}

// --- ternary ops, composed of the binary ones (autograd follows). A float16/bfloat16 result is
// computed in float32 and rounded once, as PyTorch's fused kernels do.
namespace {
// The result dtype of a composite over `tensors`, when it is a 16-bit float (else nothing).
std::optional<DType> reduced_result(std::initializer_list<const Tensor*> tensors) {
  DType t = result_type_of(tensors);
  return is_reduced_float(t) ? std::optional<DType>(t) : std::nullopt;
}
}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  if (auto low = reduced_result({&start, &end, &weight}))
    return lerp(to_opmath(start), to_opmath(end), to_opmath(weight)).to(*low);
  // PyTorch's form: exact at weight 0 and 1.
  Tensor diff = end - start;
  return where(abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight));
}
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  if (auto low = reduced_result({&start, &end}))
    return lerp(to_opmath(start), to_opmath(end), weight).to(*low);
  double w = weight.to_double();
  return w < 0.5 && w > -0.5 ? start + (end - start) * weight : end - (end - start) * (1 - w);
}
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value) {
  if (auto low = reduced_result({&self, &tensor1, &tensor2}))
    return addcmul(to_opmath(self), to_opmath(tensor1), to_opmath(tensor2), value).to(*low);
  return self + tensor1 * tensor2 * value;
}
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value) {
  EMBER_CHECK_KIND(DType, is_floating_point(tensor1.dtype()) || is_floating_point(tensor2.dtype()),
                   "[addcdiv] Integer division with addcdiv is no longer supported; divide with "
                   "floating-point tensors (",
                   tensor1.dtype(), " / ", tensor2.dtype(), ")");
  if (auto low = reduced_result({&self, &tensor1, &tensor2}))
    return addcdiv(to_opmath(self), to_opmath(tensor1), to_opmath(tensor2), value).to(*low);
  return self + tensor1 / tensor2 * value;
}
Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max) {
  EMBER_CHECK(min.defined() || max.defined(),
              "[clamp] At least one of 'min' or 'max' must not be None");
  Tensor out = x;
  if (min.defined()) out = where(out < min, min, out);
  if (max.defined()) out = where(out > max, max, out);
  if (out.is_same(x)) out = x.clone();
  return out;
}

// Operators of the bitwise ops.
Tensor operator&(const Tensor& a, const Tensor& b) {
  return bitwise_and(a, b);
}
Tensor operator|(const Tensor& a, const Tensor& b) {
  return bitwise_or(a, b);
}
Tensor operator^(const Tensor& a, const Tensor& b) {
  return bitwise_xor(a, b);
}
Tensor operator~(const Tensor& x) {
  return bitwise_not(x);
}
Tensor operator<<(const Tensor& a, const Tensor& b) {
  return bitwise_left_shift(a, b);
}
Tensor operator>>(const Tensor& a, const Tensor& b) {
  return bitwise_right_shift(a, b);
}

// --- where and masked_fill

Tensor where(const Tensor& cond0, const Tensor& a0, const Tensor& b0) {
  EMBER_CHECK_KIND(DType, cond0.dtype() == kBool,
                   "[where] expected condition to be a bool tensor, but got a tensor with dtype ",
                   cond0.dtype(), "; compare it first, e.g. x > 0");
  Device dev = operand_device("where", {&cond0, &a0, &b0});
  DType common = result_type_of({&a0, &b0});
  Tensor cond = on_device(cond0, dev);
  Tensor a = on_device(a0, dev).to(common), b = on_device(b0, dev).to(common);
  Shape shape =
      broadcast_shape("where", broadcast_shape("where", cond.sizes(), a.sizes()), b.sizes());
  Tensor out = make_tensor(shape, common, dev);
  if (out.numel() == 0) return out;
  BroadcastView vc(cond, shape), va(a, shape), vb(b, shape);
  backend_for(dev.type()).where(view_of(out), vc.view, va.view, vb.view);
  if (autograd::needs_grad({&a0, &b0}) && out.is_floating_point()) {
    autograd::record("WhereBackward0", {&a0, &b0}, out,
                     [cond, a0m = a0.detach(), b0m = b0.detach(), ga = a0.requires_grad(),
                      gb = b0.requires_grad()](const Tensor& g) {
                       Tensor ra = ga ? where(cond, g, 0.0) : Tensor();
                       Tensor rb = gb ? where(cond, 0.0, g) : Tensor();
                       if (ga) ra = autograd::sum_to(ra, a0m.sizes()).to(a0m.device(), a0m.dtype());
                       if (gb) rb = autograd::sum_to(rb, b0m.sizes()).to(b0m.device(), b0m.dtype());
                       return std::vector<Tensor>{ra, rb};
                     });
  }
  return out;
}
Tensor where(const Tensor& c, const Scalar& a, const Tensor& b) {
  return where(c, wrap_scalar(a, b.device()), b);
}
Tensor where(const Tensor& c, const Tensor& a, const Scalar& b) {
  return where(c, a, wrap_scalar(b, a.device()));
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  Tensor out = x.expand(broadcast_shape("masked_fill", x.sizes(), mask.sizes())).clone();
  return out.masked_fill_(mask, value);
}

Tensor& Tensor::masked_fill_(const Tensor& mask0, const Scalar& value) {
  EMBER_CHECK_KIND(DType, mask0.dtype() == kBool,
                   "[masked_fill_] only supports boolean masks, but got mask with dtype ",
                   mask0.dtype());
  Device dev = operand_device("masked_fill_", {this, &mask0});
  EMBER_CHECK_KIND(Device, dev == device(),
                   "Expected all tensors to be on the same device, but "
                   "found at least two devices, ",
                   mask0.device(), " and ", device(), "! (in masked_fill_)");
  Shape shape = broadcast_shape("masked_fill_", sizes(), mask0.sizes());
  EMBER_CHECK_KIND(Shape, shape == sizes(), "[masked_fill_] mask of shape ",
                   shape_str(mask0.sizes()), " can't be broadcast to the tensor's shape ",
                   shape_str(sizes()));
  check_writable("masked_fill_", *this);
  if (numel() == 0) return *this;
  Tensor mask = on_device(mask0, dev);
  storage()->bump_version();
  autograd::record_inplace("MaskedFillBackward0", *this, {}, [mask](const Tensor& g) {
    return std::vector<Tensor>{g.masked_fill(mask, 0)};
  });
  Tensor fill = make_tensor({}, dtype(), dev);
  backend_for(dev.type()).fill(view_of(fill), value);
  BroadcastView vm(mask, shape), vf(fill, shape);
  View self = view_of(*this);
  backend_for(dev.type()).where(self, vm.view, vf.view, self);
  return *this;
}

// --- in-place methods

Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {
  if (alpha.to_double() == 1 && !alpha.is_bool()) return binary_(BinaryOp::Add, *this, other);
  return binary_(BinaryOp::Add, *this, binary(BinaryOp::Mul, other, alpha));
}
Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) {
  if (alpha.to_double() == 1 && !alpha.is_bool()) return binary_(BinaryOp::Sub, *this, other);
  return binary_(BinaryOp::Sub, *this, binary(BinaryOp::Mul, other, alpha));
}
Tensor& Tensor::mul_(const Tensor& other) {
  return binary_(BinaryOp::Mul, *this, other);
}
Tensor& Tensor::div_(const Tensor& other) {
  return binary_(BinaryOp::Div, *this, other);
}
Tensor& Tensor::add_(const Scalar& other) {
  return binary_(BinaryOp::Add, *this, other);
}
Tensor& Tensor::sub_(const Scalar& other) {
  return binary_(BinaryOp::Sub, *this, other);
}
Tensor& Tensor::mul_(const Scalar& other) {
  return binary_(BinaryOp::Mul, *this, other);
}
Tensor& Tensor::div_(const Scalar& other) {
  return binary_(BinaryOp::Div, *this, other);
}

Tensor& Tensor::fill_(const Scalar& value) {
  check_writable("fill_", *this);
  storage()->bump_version();
  autograd::record_inplace("FillBackward0", *this, {},
                           [](const Tensor&) { return std::vector<Tensor>{Tensor()}; });
  if (numel() > 0) backend_for(*this).fill(view_of(*this), value);
  return *this;
}

// --- operators

Tensor operator+(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::Add, a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::Sub, a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::Mul, a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::Div, a, b);
}
Tensor operator+(const Tensor& a, const Scalar& b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Scalar& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Scalar& b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Scalar& b) {
  return div(a, b);
}
Tensor operator+(const Scalar& a, const Tensor& b) {
  return binary(BinaryOp::Add, wrap_scalar(a, b.device()), b);
}
Tensor operator-(const Scalar& a, const Tensor& b) {
  return binary(BinaryOp::Sub, wrap_scalar(a, b.device()), b);
}
Tensor operator*(const Scalar& a, const Tensor& b) {
  return binary(BinaryOp::Mul, wrap_scalar(a, b.device()), b);
}
Tensor operator/(const Scalar& a, const Tensor& b) {
  return binary(BinaryOp::Div, wrap_scalar(a, b.device()), b);
}
Tensor operator-(const Tensor& x) {
  return neg(x);
}
Tensor operator==(const Tensor& a, const Tensor& b) {
  return eq(a, b);
}
Tensor operator!=(const Tensor& a, const Tensor& b) {
  return ne(a, b);
}
Tensor operator<(const Tensor& a, const Tensor& b) {
  return lt(a, b);
}
Tensor operator<=(const Tensor& a, const Tensor& b) {
  return le(a, b);
}
Tensor operator>(const Tensor& a, const Tensor& b) {
  return gt(a, b);
}
Tensor operator>=(const Tensor& a, const Tensor& b) {
  return ge(a, b);
}
Tensor operator==(const Tensor& a, const Scalar& b) {
  return eq(a, b);
}
Tensor operator!=(const Tensor& a, const Scalar& b) {
  return ne(a, b);
}
Tensor operator<(const Tensor& a, const Scalar& b) {
  return lt(a, b);
}
Tensor operator<=(const Tensor& a, const Scalar& b) {
  return le(a, b);
}
Tensor operator>(const Tensor& a, const Scalar& b) {
  return gt(a, b);
}
Tensor operator>=(const Tensor& a, const Scalar& b) {
  return ge(a, b);
}
Tensor operator&&(const Tensor& a, const Tensor& b) {
  return logical_and(a, b);
}
Tensor operator||(const Tensor& a, const Tensor& b) {
  return logical_or(a, b);
}
Tensor operator!(const Tensor& x) {
  return logical_not(x);
}
Tensor& operator+=(Tensor& a, const Tensor& b) {
  return a.add_(b);
}
Tensor& operator-=(Tensor& a, const Tensor& b) {
  return a.sub_(b);
}
Tensor& operator*=(Tensor& a, const Tensor& b) {
  return a.mul_(b);
}
Tensor& operator/=(Tensor& a, const Tensor& b) {
  return a.div_(b);
}
Tensor& operator+=(Tensor& a, const Scalar& b) {
  return a.add_(b);
}
Tensor& operator-=(Tensor& a, const Scalar& b) {
  return a.sub_(b);
}
Tensor& operator*=(Tensor& a, const Scalar& b) {
  return a.mul_(b);
}
Tensor& operator/=(Tensor& a, const Scalar& b) {
  return a.div_(b);
}

}  // namespace ember
