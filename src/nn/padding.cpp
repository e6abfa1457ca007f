// nn/padding.cpp: F::pad -- constant (negative amounts crop), reflect, replicate and circular,
// pad pairs from the last dim backwards as PyTorch -- composed of narrow, flip, expand and cat,
// so every backend and autograd come with it.
#include "ember/nn/functional.h"
#include "ember/ops.h"

namespace ember::nn::functional {

namespace {

// x padded along d by (left, right) in `mode`.
Tensor pad_dim(const Tensor& x, int64_t d, int64_t left, int64_t right, const std::string& mode,
               double value) {
  const int64_t n = x.size(d);
  if (mode == "constant") {
    Tensor y = x;
    if (left < 0 || right < 0) {  // crop first
      const int64_t l = std::max<int64_t>(0, -left), r = std::max<int64_t>(0, -right);
      EMBER_CHECK_KIND(Shape, l + r <= n, "[pad] cropping ", l + r, " from dim ", d, " of size ", n,
                       " leaves nothing");
      y = y.narrow(d, l, n - l - r);
    }
    std::vector<Tensor> parts;
    auto block = [&](int64_t k) {
      Shape s = y.sizes();
      s[static_cast<size_t>(d)] = k;
      return full(s, value, {.dtype = y.dtype(), .device = y.device()});
    };
    if (left > 0) parts.push_back(block(left));
    parts.push_back(y);
    if (right > 0) parts.push_back(block(right));
    return parts.size() == 1 ? y : cat(parts, d);
  }
  EMBER_CHECK_KIND(Value, left >= 0 && right >= 0, "[pad] mode ", mode,
                   " takes non-negative padding, got (", left, ", ", right, ") for dim ", d);
  if (left == 0 && right == 0) return x;
  Tensor before, after;
  if (mode == "reflect") {
    EMBER_CHECK_KIND(Value, left < n && right < n, "[pad] reflect padding (", left, ", ", right,
                     ") must be smaller than the dim's size ", n, " (dim ", d, ")");
    before = x.narrow(d, 1, left).flip({d});
    after = x.narrow(d, n - 1 - right, right).flip({d});
  } else if (mode == "replicate") {
    EMBER_CHECK_KIND(Value, n > 0, "[pad] replicate needs a non-empty dim ", d);
    Shape sl = x.sizes(), sr = x.sizes();
    sl[static_cast<size_t>(d)] = left;
    sr[static_cast<size_t>(d)] = right;
    before = x.narrow(d, 0, 1).expand(sl);
    after = x.narrow(d, n - 1, 1).expand(sr);
  } else if (mode == "circular") {
    EMBER_CHECK_KIND(Value, left <= n && right <= n, "[pad] circular padding (", left, ", ", right,
                     ") must be at most the dim's size ", n, " (dim ", d, ")");
    before = x.narrow(d, n - left, left);
    after = x.narrow(d, 0, right);
  } else {
    EMBER_CHECK_KIND(Value, false, "[pad] unknown mode \"", mode,
                     "\"; use constant, reflect, replicate or circular");
  }
  return cat({before, x, after}, d);
}

}  // namespace

Tensor pad(const Tensor& input, const std::vector<int64_t>& pad, const std::string& mode,
           double value) {
  EMBER_CHECK_KIND(Shape, pad.size() % 2 == 0, "[pad] padding length must be even, got ",
                   pad.size());
  const auto pairs = static_cast<int64_t>(pad.size() / 2);
  EMBER_CHECK_KIND(Shape, pairs <= input.dim(), "[pad] padding of ", pairs,
                   " dims is too long for an input of shape ", shape_str(input.sizes()));
  EMBER_CHECK_KIND(Shape, mode == "constant" || pairs < input.dim(), "[pad] mode ", mode,
                   " pads at most the dims after the first (", input.dim() - 1,
                   " here), as PyTorch's (batch or channel first)");
  Tensor y = input;
  for (int64_t i = 0; i < pairs; ++i)
    y = pad_dim(y, input.dim() - 1 - i, pad[static_cast<size_t>(2 * i)],
                pad[static_cast<size_t>(2 * i + 1)], mode, value);
  return y;
}

}  // namespace ember::nn::functional
