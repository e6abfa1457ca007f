// ops/ctc.cpp: connectionist temporal classification's forward (alpha) and backward (beta)
// recursions in log space, one step per time step as tensor ops over the batch and the extended
// label positions (any device), and the gradient of Graves et al. recorded as the op's backward.
#include "ops/ctc.h"

#include <limits>

#include "autograd/function.h"
#include "ember/creation.h"
#include "ember/ops.h"

namespace ember::nn::functional::detail {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// What the recursions read besides the log-probabilities, built on the host from the labels and
// lengths and moved to log_probs' device. Extended positions s in [0, L), L = 2 S + 1: blanks at
// even s, label (s - 1) / 2 at odd s, blanks beyond a sample's 2 target_length + 1 positions.
struct Layout {
  Tensor labels;     // (T, N, L) int64: the class at each extended position
  Tensor skip;       // (N, L) 0 where s may be reached from s - 2, -inf elsewhere
  Tensor skip_next;  // (N, L) skip at s + 2: whether s + 2 may be reached from s
  Tensor starts;     // (N, L) bool: the positions a path may start at (0, and 1 for a label)
  Tensor ends;       // (N, L) bool: the positions a path may end at (2 S_n, and 2 S_n - 1)
  Tensor active;     // (T, N, 1) bool: t < input_length
  Tensor last;       // (T, N, 1) bool: t == input_length - 1
};

Layout layout_of(const Tensor& log_probs, const std::vector<int64_t>& targets, int64_t S,
                 const std::vector<int64_t>& input_lengths,
                 const std::vector<int64_t>& target_lengths, int64_t blank) {
  const int64_t T = log_probs.size(0), N = log_probs.size(1), L = 2 * S + 1;
  std::vector<int64_t> labels(N * L, blank);
  std::vector<double> skip(N * L, kNegInf), skip_next(N * L, kNegInf);
  std::vector<uint8_t> starts(N * L, 0), ends(N * L, 0), active(T * N, 0), last(T * N, 0);
  for (int64_t n = 0; n < N; ++n) {
    const int64_t len = target_lengths[n], row = n * L;
    for (int64_t k = 0; k < len; ++k) labels[row + 2 * k + 1] = targets[n * S + k];
    for (int64_t s = 3; s < 2 * len + 1; s += 2)
      if (labels[row + s] != labels[row + s - 2]) skip[row + s] = skip_next[row + s - 2] = 0;
    starts[row] = 1;
    ends[row + 2 * len] = 1;
    if (len > 0) starts[row + 1] = ends[row + 2 * len - 1] = 1;
    for (int64_t t = 0; t < input_lengths[n]; ++t) active[t * N + n] = 1;
    if (input_lengths[n] > 0) last[(input_lengths[n] - 1) * N + n] = 1;
  }
  const Device device = log_probs.device();
  auto mask = [&](const std::vector<uint8_t>& v, const Shape& shape) {
    return from_vector(v, shape).to(kBool).to(device);
  };
  auto bias = [&](const std::vector<double>& v) {
    return from_vector(v, Shape{N, L}).to(log_probs.dtype()).to(device);
  };
  return {.labels = from_vector(labels, Shape{1, N, L}).to(device).expand({T, N, L}),
          .skip = bias(skip),
          .skip_next = bias(skip_next),
          .starts = mask(starts, {N, L}),
          .ends = mask(ends, {N, L}),
          .active = mask(active, {T, N, 1}),
          .last = mask(last, {T, N, 1})};
}

// log(exp(a) + exp(b) + exp(c)), -inf where all three are.
Tensor logsumexp3(const Tensor& a, const Tensor& b, const Tensor& c) {
  return logsumexp(stack({a, b, c}), {0});
}

// alpha_t(s) = log-probability of the paths through position s at step t, log_probs[t] included,
// held at its last value past each input length. lp_ext: (T, N, L) -> (T, N, L).
Tensor alphas_of(const Tensor& lp_ext, const Layout& lay) {
  const int64_t T = lp_ext.size(0), N = lp_ext.size(1), L = lp_ext.size(2);
  const Tensor pad = full({N, 2}, kNegInf, {.dtype = lp_ext.dtype(), .device = lp_ext.device()});
  std::vector<Tensor> alphas{where(lay.starts, lp_ext[0], kNegInf)};
  for (int64_t t = 1; t < T; ++t) {
    const Tensor& prev = alphas.back();
    Tensor shifted = cat({pad, prev}, 1);  // position s + 2 holds alpha(s)
    Tensor next =
        logsumexp3(prev, shifted.narrow(1, 1, L), shifted.narrow(1, 0, L) + lay.skip) + lp_ext[t];
    alphas.push_back(where(lay.active[t], next, prev));
  }
  return stack(alphas);
}

// beta_t(s) = log-probability of the paths from position s at step t to an end, log_probs[t]
// included; -inf from each input length on. lp_ext: (T, N, L) -> (T, N, L).
Tensor betas_of(const Tensor& lp_ext, const Layout& lay) {
  const int64_t T = lp_ext.size(0), N = lp_ext.size(1), L = lp_ext.size(2);
  const Tensor pad = full({N, 2}, kNegInf, {.dtype = lp_ext.dtype(), .device = lp_ext.device()});
  std::vector<Tensor> betas(T);
  Tensor shifted =
      full({N, L + 2}, kNegInf,
           {.dtype = lp_ext.dtype(), .device = lp_ext.device()});  // position s holds beta_{t+1}(s)
  for (int64_t t = T - 1; t >= 0; --t) {
    Tensor rec = logsumexp3(shifted.narrow(1, 0, L), shifted.narrow(1, 1, L),
                            shifted.narrow(1, 2, L) + lay.skip_next) +
                 lp_ext[t];
    Tensor start = where(lay.ends, lp_ext[t], kNegInf);
    betas[t] = where(lay.last[t], start, where(lay.active[t], rec, kNegInf));
    shifted = cat({betas[t], pad}, 1);
  }
  return stack(betas);
}

}  // namespace

Tensor ctc_negative_log_likelihood(const Tensor& log_probs, const std::vector<int64_t>& targets,
                                   int64_t max_target_length,
                                   const std::vector<int64_t>& input_lengths,
                                   const std::vector<int64_t>& target_lengths, int64_t blank,
                                   bool zero_infinity) {
  const int64_t N = log_probs.size(1);
  Layout lay;
  Tensor lp_ext, alphas, nll;
  {
    NoGradGuard no_grad;
    lay = layout_of(log_probs, targets, max_target_length, input_lengths, target_lengths, blank);
    lp_ext = log_probs.gather(2, lay.labels);
    alphas = alphas_of(lp_ext, lay);
    nll = -logsumexp(where(lay.ends, alphas[log_probs.size(0) - 1], kNegInf), {1});
    // No time step: the empty alignment, certain for an empty target and impossible otherwise.
    std::vector<double> empty_input(N, 0.0);
    bool any_empty = false;
    for (int64_t n = 0; n < N; ++n) {
      if (input_lengths[n] > 0) continue;
      any_empty = true;
      empty_input[n] = target_lengths[n] == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    }
    if (any_empty) {
      std::vector<uint8_t> is_empty(N);
      for (int64_t n = 0; n < N; ++n) is_empty[n] = input_lengths[n] == 0;
      nll = where(from_vector(is_empty).to(kBool).to(nll.device()),
                  from_vector(empty_input).to(nll.dtype()).to(nll.device()), nll);
    }
  }
  Tensor out = zero_infinity ? where(isinf(nll), 0.0, nll) : nll.clone();
  autograd::record(
      "CtcLossBackward0", {&log_probs}, out,
      [saved = autograd::SavedTensor(log_probs), lay, lp_ext, alphas, nll,
       zero_infinity](const Tensor& g) {
        NoGradGuard no_grad;
        const Tensor lp = saved.unpack();
        const int64_t n = lp.size(1);
        Tensor lcab = alphas + betas_of(lp_ext, lay);
        // Each extended position's posterior; 0 where no path passes (lp_ext may be -inf there).
        Tensor post = where(lcab == kNegInf, 0.0, exp(lcab - lp_ext + nll.view({1, n, 1})));
        Tensor grad = exp(lp) - zeros_like(lp).scatter_add_(2, lay.labels, post);
        grad = where(lay.active, grad, 0.0);
        Tensor infinite = isinf(nll).view({1, n, 1});
        grad = zero_infinity ? where(infinite, 0.0, grad)
                             : where(logical_and(infinite, lay.active),
                                     std::numeric_limits<double>::quiet_NaN(), grad);
        return std::vector<Tensor>{grad * g.view({1, n, 1})};
      });
  return out;
}

}  // namespace ember::nn::functional::detail
