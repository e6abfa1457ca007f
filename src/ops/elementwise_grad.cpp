// ops/elementwise_grad.cpp: records element-wise ops for autograd, evaluating the gradient
// expressions of unary_ops.def and binary_ops.def.
#include <string_view>

#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

using autograd::SavedTensor;

// Helpers the gradient expressions of the .def files use.
// relu's gradient, g where y > 0 (0 at y == 0, as PyTorch's threshold_backward): one pass instead
// of a comparison, a bool tensor and a where.
Tensor relu_backward(const Tensor& g, const Tensor& y) {
  return binary_op(BinaryOp::ReluBackward, g, y);
}
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
// silu(x) = x s(x): s (1 + x (1 - s)).
Tensor silu_backward(const Tensor& g, const Tensor& x) {
  Tensor s = sigmoid(x);
  return g * s * (1 + x * (1 - s));
}
// mish(x) = x tanh(softplus(x)): tanh(sp) + x s(x) (1 - tanh(sp)^2).
Tensor mish_backward(const Tensor& g, const Tensor& x) {
  Tensor t = tanh(softplus(x));
  return g * (t + x * sigmoid(x) * (1 - t * t));
}
// hardswish: 0 below -3, x / 3 + 1/2 up to 3, 1 above (PyTorch's boundaries).
Tensor hardswish_backward(const Tensor& g, const Tensor& x) {
  return where(x < -3, 0.0, where(x <= 3, g * (x / 3 + 0.5), g));
}
// copysign(a, b) = |a| sign(b): the ratio y / a, 0 where a == 0.
Tensor copysign_backward(const Tensor& g, const Tensor& a, const Tensor& y) {
  return where(a == 0, 0.0, g * (y / a));
}
// maximum/minimum: the winner takes the gradient, ties split it.
Tensor pick_backward(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& wins) {
  return where(a == b, g / 2, where(wins, g, 0.0));
}

// Whether a gradient expression (a .def entry, stringified) reads the variable `name`. Only the
// tensors a formula reads are saved, as in PyTorch: changing mul's output in place, or add's
// operands, must not break backward.
constexpr bool mentions(std::string_view expr, char name) {
  auto ident = [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  for (size_t i = 0; i < expr.size(); ++i)
    if (expr[i] == name && (i == 0 || !ident(expr[i - 1])) &&
        (i + 1 == expr.size() || !ident(expr[i + 1])))
      return true;
  return false;
}
static_assert(mentions("g * y * (1 - y)", 'y') && !mentions("gelu_backward(g, x, p)", 'y'));

// Which of x and y each unary op's gradient reads.
struct UnaryUses {
  bool x, y;
};
constexpr UnaryUses kUnaryUses[] = {
#define EMBER_UNARY(Name, name, Fn, kind, form, grad) {mentions(#grad, 'x'), mentions(#grad, 'y')},
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
};

// Which of a, b and y each binary op's gradients read: [0] for a's gradient, [1] for b's.
struct BinaryUses {
  bool a, b, y;
};
constexpr BinaryUses kBinaryUses[][2] = {
#define EMBER_BINARY(Name, name, Fn, kind, form, grad_a, grad_b)             \
  {{mentions(#grad_a, 'a'), mentions(#grad_a, 'b'), mentions(#grad_a, 'y')}, \
   {mentions(#grad_b, 'a'), mentions(#grad_b, 'b'), mentions(#grad_b, 'y')}},
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
};

autograd::SavedTensor save_if(bool needed, const Tensor& t, bool is_output = false) {
  return needed ? SavedTensor(t, is_output) : SavedTensor();
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
  const UnaryUses& uses = kUnaryUses[static_cast<int>(op)];
  autograd::record(backward_name(op), {&x}, out,
                   [op, p, info = InputInfo(x), sx = save_if(uses.x, x),
                    sy = save_if(uses.y, out, true)](const Tensor& g) -> std::vector<Tensor> {
                     Tensor x = sx.unpack(), y = sy.unpack(), r;
                     switch (op) {
#define EMBER_UNARY(Name, name, Fn, kind, form, grad) \
  case UnaryOp::Name:                                 \
    r = (grad);                                       \
    break;
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
                     }
                     return {info.fit(r)};
                   });
}

void record_binary(BinaryOp op, const Tensor& a0, const Tensor& b0, const Tensor& a_used,
                   const Tensor& b_used, const Tensor& out) {
  if (!autograd::needs_grad({&a0, &b0}) || !out.is_floating_point()) return;
  // Saved: what the gradients of the inputs that require grad read.
  const BinaryUses* uses = kBinaryUses[static_cast<int>(op)];
  bool ga = a0.requires_grad(), gb = b0.requires_grad();
  auto need = [&](bool BinaryUses::*v) { return (ga && uses[0].*v) || (gb && uses[1].*v); };
  autograd::record(
      backward_name(op), {&a0, &b0}, out,
      [op, ia = InputInfo(a0), ib = InputInfo(b0), sa = save_if(need(&BinaryUses::a), a_used),
       sb = save_if(need(&BinaryUses::b), b_used),
       sy = save_if(need(&BinaryUses::y), out, true)](const Tensor& g) {
        Tensor a = sa.unpack(), b = sb.unpack(), y = sy.unpack(), ra, rb;
        switch (op) {
#define EMBER_BINARY(Name, name, Fn, kind, form, grad_a, grad_b) \
  case BinaryOp::Name:                                           \
    if (ia.requires_grad) ra = (grad_a);                         \
    if (ib.requires_grad) rb = (grad_b);                         \
    break;
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
        }
        return std::vector<Tensor>{ia.fit(ra), ib.fit(rb)};
      });
}

}  // namespace ember
