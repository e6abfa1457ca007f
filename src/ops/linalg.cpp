// ops/linalg.cpp: products built on matmul (dot, vdot, mv, outer, addmm, addbmm, baddbmm),
// diagonals (diag, trace) and norms (linalg.vector_norm with PyTorch's gradient at zero,
// linalg.matrix_norm's entry-wise and induced forms, norm), cross, kron and cdist.
#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK_KIND(DType, a.dtype() == b.dtype(), "[", op,
                   "] expected both vectors to have same dtype, but found ", a.dtype(), " and ",
                   b.dtype());
}

// beta * self + alpha * product, PyTorch's rule that beta == 0 ignores self (even NaN in it).
Tensor scaled_sum(const Tensor& self, const Tensor& product, const Scalar& beta,
                  const Scalar& alpha) {
  Tensor p = alpha.to_double() == 1 ? product : product * alpha;
  if (beta.to_double() == 0) {
    EMBER_CHECK_KIND(Shape, broadcast_shapes(self.sizes(), p.sizes()) == p.sizes(),
                     "[addmm] self of shape ", shape_str(self.sizes()),
                     " does not broadcast to the product's ", shape_str(p.sizes()));
    return p;
  }
  return (beta.to_double() == 1 ? self : self * beta) + p;
}

// The flat positions of diagonal `k` of an (n, m) matrix, and how many there are.
Tensor diagonal_positions(int64_t n, int64_t m, int64_t k, Device device) {
  int64_t row0 = k >= 0 ? 0 : -k, col0 = k >= 0 ? k : 0;
  int64_t count = std::max<int64_t>(0, std::min(n - row0, m - col0));
  return arange(count, {.dtype = kInt64, .device = device}) * (m + 1) + (row0 * m + col0);
}

}  // namespace

Tensor dot(const Tensor& a, const Tensor& b) {
  EMBER_CHECK_KIND(Shape, a.dim() == 1 && b.dim() == 1, "[dot] 1D tensors expected, but got ",
                   a.dim(), "D and ", b.dim(), "D tensors");
  EMBER_CHECK_KIND(Shape, a.size(0) == b.size(0),
                   "[dot] inconsistent tensor size, expected tensor [", a.size(0), "] and src [",
                   b.size(0), "] to have the same number of elements");
  check_same_dtype("dot", a, b);
  return matmul(a, b);
}
Tensor vdot(const Tensor& a, const Tensor& b) {
  return dot(a, b);  // real dtypes: no conjugate
}
Tensor mv(const Tensor& a, const Tensor& v) {
  EMBER_CHECK_KIND(Shape, a.dim() == 2 && v.dim() == 1, "[mv] expected a matrix and a vector, got ",
                   shape_str(a.sizes()), " and ", shape_str(v.sizes()));
  return matmul(a, v);
}
Tensor outer(const Tensor& a, const Tensor& b) {
  EMBER_CHECK_KIND(Shape, a.dim() == 1 && b.dim() == 1, "[outer] expected 1-D vectors, got ",
                   shape_str(a.sizes()), " and ", shape_str(b.sizes()));
  return a.unsqueeze(1) * b.unsqueeze(0);
}
// addmm, baddbmm and addbmm: on autocast's lower-precision list (all operands cast); 16-bit
// operands are computed in float32 and rounded once, as PyTorch's fused GEMM epilogue.
#define EMBER_ADD_PRODUCT(name, product)                                                   \
  Tensor name(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta,    \
              const Scalar& alpha) {                                                       \
    if (std::vector<Tensor> low; autocast_lower_all({&self, &a, &b}, low))                 \
      return name(low[0], low[1], low[2], beta, alpha);                                    \
    if (is_reduced_float(a.dtype())) {                                                     \
      autocast_detail::Suspend no_autocast;                                                \
      return name(to_opmath(self), to_opmath(a), to_opmath(b), beta, alpha).to(a.dtype()); \
    }                                                                                      \
    return scaled_sum(self, product, beta, alpha);                                         \
  }
EMBER_ADD_PRODUCT(addmm, mm(a, b))
EMBER_ADD_PRODUCT(baddbmm, bmm(a, b))
EMBER_ADD_PRODUCT(addbmm, sum(bmm(a, b), {0}))
#undef EMBER_ADD_PRODUCT

Tensor diag(const Tensor& x, int64_t diagonal) {
  EMBER_CHECK_KIND(Shape, x.dim() == 1 || x.dim() == 2, "[diag] expected a 1-D or 2-D tensor, got ",
                   shape_str(x.sizes()));
  if (x.dim() == 2) {
    Tensor pos = diagonal_positions(x.size(0), x.size(1), diagonal, x.device());
    return index_select(x.reshape({-1}), 0, pos);
  }
  int64_t n = x.size(0) + (diagonal >= 0 ? diagonal : -diagonal);
  Tensor pos = diagonal_positions(n, n, diagonal, x.device());
  return zeros({n * n}, {.dtype = x.dtype(), .device = x.device()})
      .scatter_add(0, pos, x)
      .view({n, n});
}
Tensor trace(const Tensor& x) {
  EMBER_CHECK_KIND(Shape, x.dim() == 2, "[trace] expected a matrix, but got tensor with dim ",
                   x.dim());
  return sum(diag(x, 0));
}

namespace linalg {

Tensor vector_norm(const Tensor& x0, double ord, const Shape& dims, bool keepdim) {
  EMBER_CHECK_KIND(DType, x0.is_floating_point(),
                   "[linalg.vector_norm] Expected a floating point input, got ", x0.dtype(),
                   "; convert with .to(ember::kFloat32)");
  if (is_reduced_float(x0.dtype()))
    return vector_norm(to_opmath(x0), ord, dims, keepdim).to(x0.dtype());
  const Tensor& x = x0;
  if (std::isinf(ord)) {
    EMBER_CHECK_KIND(Value, x.numel() > 0 || !dims.empty(),
                     "[linalg.vector_norm] Expected a non-empty tensor for ord=", ord,
                     " (the maximum of nothing is undefined)");
    return ord > 0 ? amax(abs(x), dims, keepdim) : amin(abs(x), dims, keepdim);
  }
  if (ord == 0) return sum(ne(x, 0), dims, keepdim).to(x.dtype());
  if (ord == 1) return sum(abs(x), dims, keepdim);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = ord == 2 ? sqrt(sum(x * x, dims, keepdim))
                   : pow(sum(pow(abs(x), ord), dims, keepdim), 1.0 / ord);
  }
  // d|x|_p / dx = x |x|^(p - 2) / |x|_p^(p - 1), taken as 0 where the norm is 0 (PyTorch's rule).
  autograd::record("LinalgVectorNormBackward0", {&x}, out,
                   [sx = autograd::SavedTensor(x), sy = autograd::SavedTensor(out, true), ord, dims,
                    keepdim](const Tensor& g) {
                     Tensor x = sx.unpack(), y = sy.unpack(), gk = g;
                     if (!keepdim) {
                       uint64_t mask = dims_mask("linalg.vector_norm", dims, x.dim());
                       for (int64_t d = 0; d < x.dim(); ++d)
                         if (dims.empty() || (mask >> d & 1)) {
                           y = y.unsqueeze(d);
                           gk = gk.unsqueeze(d);
                         }
                     }
                     Tensor scale = where(y == 0, 0.0, gk / (ord == 2 ? y : pow(y, ord - 1)));
                     Tensor r = ord == 2 ? x * scale : x * pow(abs(x), ord - 2) * scale;
                     return std::vector<Tensor>{r};
                   });
  return out;
}

Tensor matrix_norm(const Tensor& x, const std::string& ord, const Shape& dims, bool keepdim) {
  EMBER_CHECK_KIND(Shape, x.dim() >= 2,
                   "[linalg.matrix_norm] The input tensor A must have at "
                   "least 2 dimensions, got ",
                   shape_str(x.sizes()));
  EMBER_CHECK_KIND(Shape, dims.size() == 2, "[linalg.matrix_norm] dim must be a 2-tuple, got ",
                   shape_str(dims));
  if (ord == "fro") return vector_norm(x, 2, dims, keepdim);
  // Induced norms: 1 (-1) is the largest (smallest) column sum of |x|, inf (-inf) the largest
  // (smallest) row sum.
  const bool cols = ord == "1" || ord == "-1", largest = ord == "1" || ord == "inf";
  EMBER_CHECK_KIND(Value, cols || ord == "inf" || ord == "-inf", "[linalg.matrix_norm] ord '", ord,
                   "' is not supported: use \"fro\", \"1\", \"-1\", \"inf\" or \"-inf\" (\"nuc\" "
                   "and 2 need singular values, which ember does not compute yet)");
  int64_t d0 = wrap_dim("linalg.matrix_norm", dims[0], x.dim());
  int64_t d1 = wrap_dim("linalg.matrix_norm", dims[1], x.dim());
  int64_t summed = cols ? d0 : d1, picked = cols ? d1 : d0;
  Tensor sums = sum(abs(x), {summed}, true);
  Tensor out = largest ? amax(sums, {picked}, true) : amin(sums, {picked}, true);
  if (keepdim) return out;
  return out.squeeze(std::max(d0, d1)).squeeze(std::min(d0, d1));
}

}  // namespace linalg

Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  return linalg::vector_norm(x, p, dims, keepdim);
}

}  // namespace ember

namespace ember {

Tensor cross(const Tensor& a0, const Tensor& b0, int64_t dim) {
  // 16-bit operands compute in float32 and round once (the differences cancel).
  if (is_reduced_float(a0.dtype()) || is_reduced_float(b0.dtype())) {
    const DType out = promote_types(a0.dtype(), b0.dtype());
    return cross(a0.to(kFloat32), b0.to(kFloat32), dim).to(out);
  }
  const Shape shape = broadcast_shape("cross", a0.sizes(), b0.sizes());
  const Tensor a = a0.expand(shape), b = b0.expand(shape);
  const int64_t d = wrap_dim("cross", dim, static_cast<int64_t>(shape.size()));
  EMBER_CHECK_KIND(Shape, shape[static_cast<size_t>(d)] == 3, "[cross] dimension ", d,
                   " must have length 3, got shape ", shape_str(shape));
  auto at = [d](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  return cat({at(a, 1) * at(b, 2) - at(a, 2) * at(b, 1), at(a, 2) * at(b, 0) - at(a, 0) * at(b, 2),
              at(a, 0) * at(b, 1) - at(a, 1) * at(b, 0)},
             d);
}

Tensor kron(const Tensor& a, const Tensor& b) {
  // Both to one rank (leading 1s), then a's dims interleaved with b's: (a0, 1, a1, 1, ...) *
  // (1, b0, 1, b1, ...) -> (a0 b0, a1 b1, ...).
  const int64_t nd = std::max(a.dim(), b.dim());
  Shape sa(static_cast<size_t>(nd - a.dim()), 1), sb(static_cast<size_t>(nd - b.dim()), 1);
  sa.insert(sa.end(), a.sizes().begin(), a.sizes().end());
  sb.insert(sb.end(), b.sizes().begin(), b.sizes().end());
  Shape ia, ib, out;
  for (size_t i = 0; i < static_cast<size_t>(nd); ++i) {
    ia.insert(ia.end(), {sa[i], 1});
    ib.insert(ib.end(), {1, sb[i]});
    out.push_back(sa[i] * sb[i]);
  }
  return (a.reshape(ia) * b.reshape(ib)).reshape(out);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  EMBER_CHECK_KIND(Shape, x1.dim() >= 2 && x2.dim() >= 2 && x1.size(-1) == x2.size(-1),
                   "[cdist] expects (..., P, M) and (..., R, M) inputs with one M, got ",
                   shape_str(x1.sizes()), " and ", shape_str(x2.sizes()));
  EMBER_CHECK_KIND(Value, p >= 0, "[cdist] p must be >= 0, got ", p);
  // (..., P, 1, M) - (..., 1, R, M): every pair's difference, its p-norm over M.
  return linalg::vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, {-1});
}

}  // namespace ember
