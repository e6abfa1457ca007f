// ops/matmul.cpp: mm, bmm and torch.matmul's rules for 1-D, 2-D and broadcast batched operands.
#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

void check_pair(const char* op, const Tensor& a, const Tensor& b) {
  common_device(op, {&a, &b});
  EMBER_CHECK_KIND(DType, a.dtype() == b.dtype(), "[", op,
                   "] expected both operands to have the same dtype, but got: ", a.dtype(),
                   " != ", b.dtype(), "; convert one with .to(other.dtype())");
}

// a: (B, M, K), b: (B, K, N) -> (B, M, N)
Tensor batched(const Tensor& a, const Tensor& b) {
  Tensor out = make_tensor({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  if (out.numel() > 0) backend_for(a).matmul(view_of(out), view_of(a), view_of(b));
  if (autograd::needs_grad({&a, &b})) {
    autograd::record("BmmBackward0", {&a, &b}, out,
                     [sa = autograd::SavedTensor(a), sb = autograd::SavedTensor(b),
                      ga = a.requires_grad(), gb = b.requires_grad()](const Tensor& g) {
                       Tensor a = sa.unpack(), b = sb.unpack();
                       return std::vector<Tensor>{ga ? batched(g, b.transpose(1, 2)) : Tensor(),
                                                  gb ? batched(a.transpose(1, 2), g) : Tensor()};
                     });
  }
  return out;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  if (std::vector<Tensor> low; autocast_lower_all({&a, &b}, low)) return mm(low[0], low[1]);
  check_pair("mm", a, b);
  EMBER_CHECK_KIND(Shape, a.dim() == 2 && b.dim() == 2, "[mm] expected 2-D tensors, got ", a.dim(),
                   "-D and ", b.dim(), "-D; use matmul() for other ranks");
  EMBER_CHECK_KIND(Shape, a.size(1) == b.size(0),
                   "[mm] mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1),
                   " and ", b.size(0), "x", b.size(1), ")");
  Tensor out = make_tensor({a.size(0), b.size(1)}, a.dtype(), a.device());
  if (out.numel() > 0) {
    // The kernel takes batches: view each matrix as a batch of one.
    Shape sa{1, a.size(0), a.size(1)}, ta{0, a.stride(0), a.stride(1)};
    Shape sb{1, b.size(0), b.size(1)}, tb{0, b.stride(0), b.stride(1)};
    Shape so{1, out.size(0), out.size(1)}, to{0, out.stride(0), out.stride(1)};
    backend_for(a).matmul(View{out.impl().data(), so, to, out.dtype()},
                          View{a.impl().data(), sa, ta, a.dtype()},
                          View{b.impl().data(), sb, tb, b.dtype()});
  }
  if (autograd::needs_grad({&a, &b})) {
    autograd::record(
        "MmBackward0", {&a, &b}, out,
        [sa = autograd::SavedTensor(a), sb = autograd::SavedTensor(b), ga = a.requires_grad(),
         gb = b.requires_grad()](const Tensor& g) {
          Tensor a = sa.unpack(), b = sb.unpack();
          return std::vector<Tensor>{ga ? mm(g, b.t()) : Tensor(), gb ? mm(a.t(), g) : Tensor()};
        });
  }
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (std::vector<Tensor> low; autocast_lower_all({&a, &b}, low)) return bmm(low[0], low[1]);
  check_pair("bmm", a, b);
  EMBER_CHECK_KIND(Shape, a.dim() == 3 && b.dim() == 3, "[bmm] expected 3-D tensors, got ", a.dim(),
                   "-D and ", b.dim(), "-D");
  EMBER_CHECK_KIND(Shape, a.size(0) == b.size(0),
                   "[bmm] batch1 and batch2 must have same number of batches, got ", a.size(0),
                   " and ", b.size(0));
  EMBER_CHECK_KIND(Shape, a.size(2) == b.size(1),
                   "[bmm] Expected size for first two dimensions of "
                   "batch2 tensor to be: [",
                   a.size(0), ", ", a.size(2), "] but got: [", b.size(0), ", ", b.size(1), "]");
  return batched(a, b);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (std::vector<Tensor> low; autocast_lower_all({&a, &b}, low)) return matmul(low[0], low[1]);
  check_pair("matmul", a, b);
  int64_t da = a.dim(), db = b.dim();
  EMBER_CHECK_KIND(Shape, da > 0 && db > 0,
                   "[matmul] both arguments need to be at least 1D, but "
                   "they are ",
                   da, "D and ", db, "D");
  if (da == 1 && db == 1) {
    EMBER_CHECK_KIND(Shape, a.size(0) == b.size(0),
                     "[matmul] inconsistent tensor size, expected "
                     "tensor [",
                     a.size(0), "] and src [", b.size(0),
                     "] to have the same number of elements, but got ", a.size(0), " and ",
                     b.size(0), " elements respectively");
    return mm(a.unsqueeze(0), b.unsqueeze(1)).view({});
  }
  if (da == 2 && db == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (da == 1 && db == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return mm(a, b);
  // Batched: a 1-D operand gets a unit dim that is removed from the result.
  Tensor A = da == 1 ? a.unsqueeze(0) : a, B = db == 1 ? b.unsqueeze(1) : b;
  int64_t M = A.size(-2), K = A.size(-1), N = B.size(-1);
  EMBER_CHECK_KIND(Shape, B.size(-2) == K, "[matmul] mat1 and mat2 shapes cannot be multiplied (",
                   M, "x", K, " and ", B.size(-2), "x", N, "); shapes ", shape_str(a.sizes()),
                   " and ", shape_str(b.sizes()));
  Shape batch_a(A.sizes().begin(), A.sizes().end() - 2),
      batch_b(B.sizes().begin(), B.sizes().end() - 2);
  Shape batch = broadcast_shape("matmul", batch_a, batch_b);
  int64_t nb = shape_numel(batch);
  Shape out_shape = batch;
  Tensor out;
  if (batch_b.empty() && A.is_contiguous()) {
    // (..., M, K) @ (K, N): one GEMM with the batch folded into M.
    out = mm(A.reshape({nb * M, K}), B);
  } else {
    Shape ea = batch, eb = batch;
    ea.insert(ea.end(), {M, K});
    eb.insert(eb.end(), {K, N});
    out = batched(A.expand(ea).reshape({nb, M, K}), B.expand(eb).reshape({nb, K, N}));
  }
  if (da > 1) out_shape.push_back(M);
  if (db > 1) out_shape.push_back(N);
  return out.view(out_shape);
}

}  // namespace ember
