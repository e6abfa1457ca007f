// ops/distributions.cpp: sampling beyond uniform and normal -- bernoulli (from a tensor of
// probabilities or one p), bernoulli_, exponential_, multinomial (with replacement: a
// searchsorted draw on each row's cumulative weights; without: the Efraimidis-Spirakis keys
// log(u) / w and their top k, an exact draw without replacement) -- all from the device's
// generator (or the one given), and Tensor's in-place forms uniform_, normal_, bernoulli_,
// exponential_.
#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

// Uniform [0, 1) in the compute dtype of t (float32 for 16-bit and integer tensors).
Tensor uniform_like(const Tensor& t, Generator* gen) {
  const DType d = t.dtype() == kFloat64 ? kFloat64 : kFloat32;
  return rand(t.sizes(), {.dtype = d, .device = t.device()}, gen);
}

void check_probability(const char* op, double p) {
  EMBER_CHECK_KIND(Value, p >= 0 && p <= 1, "[", op, "] p must be in [0, 1], got ", p);
}

}  // namespace

Tensor bernoulli(const Tensor& probs, Generator* gen) {
  EMBER_CHECK_KIND(DType, probs.is_floating_point(),
                   "[bernoulli] takes floating probabilities, got dtype ", probs.dtype());
  NoGradGuard no_grad;
  if (probs.numel() > 0) {
    const Tensor bad = logical_or(lt(probs, 0), gt(probs, 1));
    EMBER_CHECK_KIND(Value, !logical_or(bad, isnan(probs)).any().item<bool>(),
                     "[bernoulli] probabilities must be in [0, 1]");
  }
  return lt(uniform_like(probs, gen), probs).to(probs.dtype());
}

Tensor bernoulli(const Tensor& x, double p, Generator* gen) {
  check_probability("bernoulli", p);
  NoGradGuard no_grad;
  return lt(uniform_like(x, gen), p).to(x.dtype());
}

Tensor& bernoulli_(Tensor& t, double p, Generator* gen) {
  check_probability("bernoulli_", p);
  autograd::check_inplace("bernoulli_", t);
  NoGradGuard no_grad;
  return t.copy_(lt(uniform_like(t, gen), p));
}

Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* gen) {
  autograd::check_inplace("bernoulli_", t);
  NoGradGuard no_grad;
  return t.copy_(
      bernoulli(p.to(t.dtype() == kFloat64 ? kFloat64 : kFloat32).expand(t.sizes()), gen));
}

Tensor& exponential_(Tensor& t, double lambd, Generator* gen) {
  EMBER_CHECK_KIND(DType, t.is_floating_point(),
                   "[exponential_] expects a floating point tensor, got ", t.dtype());
  EMBER_CHECK_KIND(Value, lambd > 0, "[exponential_] expects lambda > 0, got ", lambd);
  autograd::check_inplace("exponential_", t);
  NoGradGuard no_grad;
  // -log(1 - u) / lambda for u in [0, 1): 0 included, infinity never.
  return t.copy_(log1p(-uniform_like(t, gen)) * (-1.0 / lambd));
}

Tensor multinomial(const Tensor& input, int64_t num_samples, bool replacement, Generator* gen) {
  EMBER_CHECK_KIND(Shape, input.dim() == 1 || input.dim() == 2,
                   "[multinomial] prob_dist must be 1 or 2 dim, got shape ",
                   shape_str(input.sizes()));
  EMBER_CHECK_KIND(DType, input.is_floating_point(),
                   "[multinomial] prob_dist must be floating point, got dtype ", input.dtype());
  const int64_t categories = input.size(-1);
  EMBER_CHECK_KIND(Value, num_samples > 0, "[multinomial] cannot sample ", num_samples,
                   " samples; num_samples must be positive");
  EMBER_CHECK_KIND(Value, replacement || num_samples <= categories, "[multinomial] cannot sample ",
                   num_samples, " > prob_dist.size(-1) (", categories,
                   ") samples without replacement");
  NoGradGuard no_grad;
  const Tensor w = (input.dim() == 1 ? input.unsqueeze(0) : input).to(kFloat64);
  const int64_t rows = w.size(0);
  EMBER_CHECK_KIND(Value, categories > 0, "[multinomial] prob_dist has no categories");
  const Tensor negative = lt(w, 0), not_finite = logical_not(isfinite(w));
  EMBER_CHECK_KIND(Value, !logical_or(negative, not_finite).any().item<bool>(),
                   "[multinomial] probability tensor contains either inf, nan or element < 0");
  const Tensor positive = gt(w, 0).sum({1});
  EMBER_CHECK_KIND(Value, min(positive).item<int64_t>() > 0,
                   "[multinomial] invalid multinomial distribution (sum of probabilities <= 0)");
  Tensor out;
  if (replacement) {
    const Tensor cdf = cumsum(w, 1);
    const Tensor u = rand({rows, num_samples}, {.dtype = kFloat64, .device = w.device()}, gen) *
                     cdf.narrow(1, categories - 1, 1);
    // The first category whose cumulative weight exceeds u: zero-weight ones are never drawn.
    out = clamp(searchsorted(cdf, u, false, true), 0, categories - 1);
  } else {
    EMBER_CHECK_KIND(Value, min(positive).item<int64_t>() >= num_samples,
                     "[multinomial] invalid multinomial distribution (with replacement=False, not "
                     "enough non-negative category to sample): a row has fewer than ",
                     num_samples, " categories of positive weight");
    const Tensor u = 1.0 - rand({rows, categories}, {.dtype = kFloat64, .device = w.device()}, gen);
    // Zero weights never win, even for u = 1 (log(u) / w would be 0 / 0 there).
    const double never = -std::numeric_limits<double>::infinity();
    out = std::get<1>(topk(where(gt(w, 0), log(u) / w, never), num_samples, 1));
  }
  return input.dim() == 1 ? out.squeeze(0) : out;
}

Tensor& Tensor::uniform_(double from, double to, Generator* gen) {
  return ember::uniform_(*this, from, to, gen);
}
Tensor& Tensor::normal_(double mean, double std, Generator* gen) {
  return ember::normal_(*this, mean, std, gen);
}
Tensor& Tensor::bernoulli_(double p, Generator* gen) {
  return ember::bernoulli_(*this, p, gen);
}
Tensor& Tensor::exponential_(double lambd, Generator* gen) {
  return ember::exponential_(*this, lambd, gen);
}
Tensor Tensor::multinomial(int64_t num_samples, bool replacement, Generator* gen) const {
  return ember::multinomial(*this, num_samples, replacement, gen);
}

}  // namespace ember
