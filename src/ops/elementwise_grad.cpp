// ops/elementwise_grad.cpp: records element-wise ops for autograd, evaluating the gradient
// expressions of unary_ops.def and binary_ops.def.
#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

using autograd::SavedTensor;

// Helpers the gradient expressions of the .def files use.
Tensor gelu_backward(const Tensor& g, const Tensor& x, const UnaryParams& p) {
  return binary_op(p.a == 1 ? BinaryOp::GeluTanhBackward : BinaryOp::GeluBackward, x, g);
}
Tensor clamp_mask(const Tensor& x, const UnaryParams& p) {
  if (p.has_a && p.has_b) return logical_and(x >= p.a, x <= p.b);
  return p.has_a ? x >= p.a : x <= p.b;
}
Tensor pow_scalar_backward(const Tensor& g, const Tensor& x, const UnaryParams& p) {
  if (p.a == 0) return zeros_like(x);
  return g * p.a * pow(x, p.a - 1);
}
// d(a^b)/db = a^b log(a), taken as 0 where a == 0 (PyTorch's convention).
Tensor pow_exponent_backward(const Tensor& g, const Tensor& a, const Tensor& y) {
  return where(a == 0, 0.0, g * y * log(a));
}
// maximum/minimum: the winner takes the gradient, ties split it.
Tensor pick_backward(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& wins) {
  return where(a == b, g / 2, where(wins, g, 0.0));
}

struct InputInfo {
  Shape sizes;
  DType dtype;
  Device device;
  bool requires_grad;
  explicit InputInfo(const Tensor& t)
      : sizes(t.sizes()), dtype(t.dtype()), device(t.device()), requires_grad(t.requires_grad()) {}
  // A gradient computed at the output's shape, brought back to this input.
  Tensor fit(const Tensor& grad) const {
    if (!grad.defined() || !requires_grad) return Tensor();
    return autograd::sum_to(grad, sizes).to(device, dtype);
  }
};

}  // namespace

void record_unary(UnaryOp op, const Tensor& x, const Tensor& out, const UnaryParams& p) {
  if (!autograd::needs_grad({&x}) || !out.is_floating_point()) return;
  autograd::record(backward_name(op), {&x}, out,
                   [op, p, info = InputInfo(x), sx = SavedTensor(x),
                    sy = SavedTensor(out)](const Tensor& g) -> std::vector<Tensor> {
                     Tensor x = sx.unpack(), y = sy.unpack(), r;
                     switch (op) {
#define EMBER_UNARY(Name, name, Fn, kind, grad) \
  case UnaryOp::Name: r = (grad); break;
#include "ops/unary_ops.def"
#undef EMBER_UNARY
                     }
                     return {info.fit(r)};
                   });
}

void record_binary(BinaryOp op, const Tensor& a0, const Tensor& b0, const Tensor& a_used,
                   const Tensor& b_used, const Tensor& out) {
  if (!autograd::needs_grad({&a0, &b0}) || !out.is_floating_point()) return;
  autograd::record(backward_name(op), {&a0, &b0}, out,
                   [op, ia = InputInfo(a0), ib = InputInfo(b0), sa = SavedTensor(a_used),
                    sb = SavedTensor(b_used), sy = SavedTensor(out)](const Tensor& g) {
                     Tensor a = sa.unpack(), b = sb.unpack(), y = sy.unpack(), ra, rb;
                     switch (op) {
#define EMBER_BINARY(Name, name, Fn, kind, grad_a, grad_b) \
  case BinaryOp::Name:                                     \
    if (ia.requires_grad) ra = (grad_a);                   \
    if (ib.requires_grad) rb = (grad_b);                   \
    break;
#include "ops/binary_ops.def"
#undef EMBER_BINARY
                     }
                     return std::vector<Tensor>{ia.fit(ra), ib.fit(rb)};
                   });
}

}  // namespace ember
