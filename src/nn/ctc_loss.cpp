// nn/ctc_loss.cpp: F::ctc_loss, PyTorch's connectionist temporal classification loss: the
// arguments checked and the targets laid out as padded rows on the host, the per-sample negative
// log-likelihoods from the alpha-beta op (ops/ctc.cpp), then PyTorch's reductions.
#include <algorithm>
#include <numeric>

#include "ember/creation.h"
#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "ops/ctc.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace {

// An integer tensor's values on the host, as int64.
std::vector<int64_t> host_values(const Tensor& t) {
  Tensor c = t.detach().cpu().to(kInt64).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

void check_integral(const char* name, const Tensor& t) {
  EMBER_CHECK_KIND(DType, is_integral(t.dtype(), false), "[ctc_loss] ", name,
                   " must hold integers, got ", t.dtype());
}

// lengths: (N), or () for one sample.
std::vector<int64_t> lengths_of(const char* name, const Tensor& lengths, int64_t batch) {
  check_integral(name, lengths);
  EMBER_CHECK_KIND(Shape, lengths.dim() <= 1 && lengths.numel() == batch, "[ctc_loss] ", name,
                   " of shape ", shape_str(lengths.sizes()), " must have one entry per sample (",
                   batch, ")");
  return host_values(lengths);
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, Reduction reduction,
                bool zero_infinity) {
  EMBER_CHECK_KIND(Shape, log_probs.dim() == 2 || log_probs.dim() == 3,
                   "[ctc_loss] log_probs must be (T, N, C) or unbatched (T, C), got shape ",
                   shape_str(log_probs.sizes()));
  EMBER_CHECK_KIND(DType, log_probs.is_floating_point(),
                   "[ctc_loss] log_probs must be floating point, got ", log_probs.dtype());
  check_integral("targets", targets);
  const bool batched = log_probs.dim() == 3;
  const Tensor lp = batched ? to_opmath(log_probs) : to_opmath(log_probs).unsqueeze(1);
  const int64_t T = lp.size(0), N = lp.size(1), C = lp.size(2);
  EMBER_CHECK(blank >= 0 && blank < C, "[ctc_loss] blank ", blank, " must be a class of log_probs ",
              shape_str(log_probs.sizes()), ", in [0, ", C, ")");
  const std::vector<int64_t> in_lens = lengths_of("input_lengths", input_lengths, N);
  const std::vector<int64_t> tgt_lens = lengths_of("target_lengths", target_lengths, N);
  for (int64_t n = 0; n < N; ++n) {
    EMBER_CHECK(in_lens[n] >= 0 && in_lens[n] <= T, "[ctc_loss] input_lengths[", n,
                "] = ", in_lens[n], " must be in [0, T] for log_probs ",
                shape_str(log_probs.sizes()));
    EMBER_CHECK(tgt_lens[n] >= 0, "[ctc_loss] target_lengths[", n, "] = ", tgt_lens[n],
                " must be non-negative");
  }
  // The targets as N padded rows of S labels.
  std::vector<int64_t> rows = host_values(targets);
  int64_t S = 0;
  if (batched && targets.dim() == 1) {
    const int64_t total = std::accumulate(tgt_lens.begin(), tgt_lens.end(), int64_t{0});
    EMBER_CHECK_KIND(Shape, targets.numel() == total, "[ctc_loss] concatenated targets of shape ",
                     shape_str(targets.sizes()), " must hold sum(target_lengths) = ", total,
                     " labels");
    S = N == 0 ? 0 : *std::max_element(tgt_lens.begin(), tgt_lens.end());
    std::vector<int64_t> padded(N * S, blank);
    for (int64_t n = 0, offset = 0; n < N; offset += tgt_lens[n++])
      std::copy_n(rows.begin() + offset, tgt_lens[n], padded.begin() + n * S);
    rows = std::move(padded);
  } else {
    const int64_t want = batched ? 2 : 1;
    EMBER_CHECK_KIND(Shape, targets.dim() == want && (!batched || targets.size(0) == N),
                     "[ctc_loss] targets of shape ", shape_str(targets.sizes()), " must be ",
                     batched ? "padded (N, S) or concatenated (sum(target_lengths))" : "(S)",
                     " for log_probs ", shape_str(log_probs.sizes()));
    S = targets.size(-1);
    for (int64_t n = 0; n < N; ++n)
      EMBER_CHECK(tgt_lens[n] <= S, "[ctc_loss] target_lengths[", n, "] = ", tgt_lens[n],
                  " exceeds the padded targets' length: targets of shape ",
                  shape_str(targets.sizes()));
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < tgt_lens[n]; ++k)
      EMBER_CHECK_KIND(Index, rows[n * S + k] >= 0 && rows[n * S + k] < C, "[ctc_loss] target ",
                       rows[n * S + k], " of sample ", n, " is not a class of log_probs ",
                       shape_str(log_probs.sizes()));
  Tensor loss =
      detail::ctc_negative_log_likelihood(lp, rows, S, in_lens, tgt_lens, blank, zero_infinity)
          .to(log_probs.dtype());
  switch (reduction) {
    case Reduction::None:
      return batched ? loss : loss.squeeze(0);
    case Reduction::Sum:
      return loss.sum();
    case Reduction::Mean:
      break;
  }
  // Each loss per label (target lengths clamped at 1), then the mean over the batch.
  std::vector<double> per_label(N);
  for (int64_t n = 0; n < N; ++n)
    per_label[n] = static_cast<double>(std::max<int64_t>(tgt_lens[n], 1));
  return (loss / from_vector(per_label).to(loss.dtype()).to(loss.device())).mean();
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets,
                const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, int64_t blank, Reduction reduction,
                bool zero_infinity) {
  return ctc_loss(log_probs, targets, from_vector(input_lengths), from_vector(target_lengths),
                  blank, reduction, zero_infinity);
}

}  // namespace ember::nn::functional
