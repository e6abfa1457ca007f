// ember/nn/functional.h: layers and losses as functions (torch.nn.functional), with PyTorch's
// reductions and numerically stable forms.
#pragma once

#include <optional>
#include <string>

#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

// The activations of torch.nn.functional (defined in ember/ops.h, with their semantics noted in
// ember/op_variants.def), so that F::silu(x) reads as in PyTorch.
using ember::celu;
using ember::elu;
using ember::gelu;
using ember::hardsigmoid;
using ember::hardswish;
using ember::hardtanh;
using ember::leaky_relu;
using ember::logsigmoid;
using ember::mish;
using ember::relu;
using ember::relu6;
using ember::selu;
using ember::sigmoid;
using ember::silu;
using ember::softplus;
using ember::softsign;
using ember::tanh;

// mse_loss, binary_cross_entropy, linear, conv2d and the poolings: ember/nn_ops.h.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);

struct CrossEntropyOptions {
  Reduction reduction = kMean;
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  Tensor weight = Tensor();  // per-class weights (C)
};
// input: (N, C) or (C) or (N, C, d1, ...) logits; target: int64 class indices (N) / () / (N, d1,
// ...). Computed from log_softmax, so large logits are safe.
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyOptions& options = {});

struct NllLossOptions {
  Reduction reduction = kMean;
  int64_t ignore_index = -100;
  Tensor weight = Tensor();
};
// log_probs: (N, C) / (C) / (N, C, d1, ...); target as for cross_entropy.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const NllLossOptions& options = {});

// input: logits; stable for any magnitude. pos_weight scales the positive term per class.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        Reduction reduction = kMean,
                                        const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor());

Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
// indices: int64 (any shape); weight: (num, dim) -> (..., dim)
// max_norm: each looked-up row whose norm_type-norm exceeds it is first rescaled in place to
// that norm (PyTorch's embedding_renorm_: by max_norm / (norm + 1e-7)), without autograd.
Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<int64_t> padding_idx = std::nullopt,
                 std::optional<double> max_norm = std::nullopt, double norm_type = 2.0);

// (nn/embedding_bag.cpp) weight's rows at indices (any shape, int64) whose norm_type-norm exceeds
// max_norm rescaled in place to max_norm / (norm + 1e-7) of themselves, without autograd.
Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm,
                          double norm_type = 2.0);
// Sums, means or maxima of bags of embeddings: the looked-up rows are added into their bags
// (one index_add), never laid out as (bags, length, dim) except for "max" with offsets. input: (B,
// L) int64 (B bags of L), or (M) with offsets (B) int64 giving each bag's start
// (include_last_offset: (B + 1), the last entry M); weight: (num, dim)
// -> (B, dim). per_sample_weights (input's shape) scale each entry (mode "sum" only); entries
// equal to padding_idx are left out (and do not count in a mean); an empty bag gives zeros.
struct EmbeddingBagFuncOptions {
  Tensor offsets{};
  std::string mode = "mean";  // "sum", "mean" or "max"
  Tensor per_sample_weights{};
  bool include_last_offset = false;
  std::optional<int64_t> padding_idx{};
  std::optional<double> max_norm{};
  double norm_type = 2.0;
};
Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                     const EmbeddingBagFuncOptions& options = {});

// y = x1^T A x2 + b per output feature. x1: (..., in1), x2: (..., in2), weight: (out, in1, in2),
// bias: (out) -> (..., out).
Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight,
                const Tensor& bias = Tensor());

// input: (N, C), (N, C, L) or (N, C, H, W); running_mean, running_var, weight, bias: (C) or
// undefined. Training normalizes with the batch statistics and, when the running tensors are
// given, updates them in place: running = (1 - momentum) running + momentum batch, with the
// unbiased batch variance. Otherwise normalizes with the running statistics.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  bool training = false, double momentum = 0.1, double eps = 1e-5);
// input: (N, C, H, W), or (N, C, L) as PyTorch reads a 3-D input; zeroes whole channels with
// probability p while training, scaling the rest by 1 / (1 - p).
Tensor dropout2d(const Tensor& input, double p = 0.5, bool training = true);
// (nn/dropouts.cpp) dropout1d: channels of (N, C, L) or (C, L); dropout3d: of (N, C, D, H, W)
// or (C, D, H, W); alpha_dropout: for SELU networks (keeps mean 0 and variance 1).
Tensor dropout1d(const Tensor& input, double p = 0.5, bool training = true);
Tensor dropout3d(const Tensor& input, double p = 0.5, bool training = true);
Tensor alpha_dropout(const Tensor& x, double p = 0.5, bool training = true);
// (nn/padding.cpp) pad: (left, right) pairs from the last dim backwards; mode "constant"
// (value; negative amounts crop), "reflect", "replicate" or "circular".
Tensor pad(const Tensor& input, const std::vector<int64_t>& pad,
           const std::string& mode = "constant", double value = 0);

// (nn/resampling.cpp) interpolate: input (N, C, spatial...) with 1 to 3 spatial dims resized to
// `size` or by `scale_factor` (one number for all dims, or one per dim), PyTorch's coordinate
// rules: mode "nearest", "nearest-exact", "linear" (3-D input), "bilinear" and "bicubic" (4-D,
// cubic convolution with A = -0.75, borders replicated), "trilinear" (5-D) or "area" (adaptive
// average pooling, 3-D and 4-D). align_corners only for the interpolating modes (default false).
struct InterpolateFuncOptions {
  std::vector<int64_t> size{};
  std::vector<double> scale_factor{};
  std::string mode = "nearest";
  std::optional<bool> align_corners{};
  std::optional<bool> recompute_scale_factor{};
};
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options);
// pixel_shuffle: (*, C r^2, H, W) -> (*, C, H r, W r); pixel_unshuffle its inverse.
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);
// (N, C, *) with channels regrouped: (groups, C / groups) read as (C / groups, groups).
Tensor channel_shuffle(const Tensor& input, int64_t groups);

// --- normalizations (nn/group_norms.cpp). rms_norm: x / sqrt(mean(x^2 over the trailing
// normalized_shape) + eps) * weight, eps by default the dtype's epsilon. group_norm: input
// (N, C, *) normalized over each of num_groups channel groups (biased variance), then weight and
// bias (C) per channel. instance_norm: group_norm with one group per channel (no running
// statistics). softmin: softmax(-x).
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                std::optional<double> eps = std::nullopt);
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
Tensor instance_norm(const Tensor& x, const Tensor& weight = Tensor(),
                     const Tensor& bias = Tensor(), double eps = 1e-5);
Tensor softmin(const Tensor& x, int64_t dim);
// input (N, C, *): x / (k + alpha / size * sum of x^2 over `size` neighbouring channels)^beta,
// the window of channel c from c - size / 2 to c + (size - 1) / 2 (zeros beyond the ends).
Tensor local_response_norm(const Tensor& input, int64_t size, double alpha = 1e-4,
                           double beta = 0.75, double k = 1.0);

// --- distances (nn/distances.cpp)
// x / max(||x||_p over dim, eps).
Tensor normalize(const Tensor& x, double p = 2.0, int64_t dim = 1, double eps = 1e-12);
// x1 . x2 / max(||x1|| ||x2||, eps) along dim, x1 and x2 broadcast.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
// ||x1 - x2 + eps||_p over the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6,
                         bool keepdim = false);

// --- more losses (nn/more_losses.cpp), PyTorch's formulas and defaults. kl_div's input is
// log-probabilities; for PyTorch's reduction="batchmean" divide its kSum result by input.size(0).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean,
                      double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean,
                  double delta = 1.0);
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = kMean,
              bool log_target = false);
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true,
                        bool full = false, double eps = 1e-8, Reduction reduction = kMean);
// var: input's shape, or input's without the last dim; clamped at eps (the value only).
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                         bool full = false, double eps = 1e-6, Reduction reduction = kMean);
// target: 1 or -1.
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin = 0.0, Reduction reduction = kMean);
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            Reduction reduction = kMean);
// input1, input2: (N, D) or (D); target: (N) or () of 1 and -1.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin = 0.0, Reduction reduction = kMean);
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin = 1.0, double p = 2.0, double eps = 1e-6,
                           bool swap = false, Reduction reduction = kMean);
// input, target: (N, C); the loss is averaged over the C classes, then reduced over N.
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const Tensor& weight = Tensor(), Reduction reduction = kMean);

// (nn/ctc_loss.cpp) connectionist temporal classification, as PyTorch. log_probs: (T, N, C), or
// (T, C) for one sample, log-softmaxed over C; targets: padded (N, S) (unbatched: (S)) or the
// N targets concatenated (sum(target_lengths)), integers, none of them blank; input_lengths,
// target_lengths: (N) integers (unbatched: () or (1)). -> (N) (unbatched: ()) with kNone, or the
// sum, or the mean of the losses each divided by its target length (at least 1). An impossible
// alignment gives inf (its gradient NaN, as PyTorch's), or 0 and a 0 gradient with
// zero_infinity. The gradient with respect to log_probs is PyTorch's: exp(log_probs) minus the
// posterior of each class (the logits' gradient through log_softmax), 0 beyond input_lengths.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0, Reduction reduction = kMean,
                bool zero_infinity = false);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets,
                const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, int64_t blank = 0,
                Reduction reduction = kMean, bool zero_infinity = false);

// --- attention (nn/attention.cpp), PyTorch's F.scaled_dot_product_attention. query
// (N, ..., Hq, L, E), key (N, ..., H, S, E), value (N, ..., H, S, Ev) -> (N, ..., Hq, L, Ev):
// softmax(q k^T * scale + mask) v, scale 1 / sqrt(E) by default. attn_mask broadcasts to
// (N, ..., L, S): bool (true takes part) or of the query's dtype (added to the scores);
// is_causal masks as the upper-left lower triangle (an error together with attn_mask); a query
// row that takes part with no key gives zeros (as PyTorch's _safe_softmax). dropout_p drops
// attention weights whenever it is above 0 (pass 0 in evaluation, as the modules do).
// enable_gqa: H may divide Hq, each key/value head serving Hq / H query heads.
struct ScaledDotProductAttentionOptions {
  Tensor attn_mask{};
  double dropout_p = 0.0;
  bool is_causal = false;
  std::optional<double> scale{};
  bool enable_gqa = false;
};
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const ScaledDotProductAttentionOptions& options = {});
// The same as a composition of matmul, softmax and matmul (PyTorch's math backend): the
// (L, S) scores are materialized. The reference of the fused kernels.
Tensor scaled_dot_product_attention_math(const Tensor& query, const Tensor& key,
                                         const Tensor& value,
                                         const ScaledDotProductAttentionOptions& options = {});

}  // namespace ember::nn::functional

namespace ember::nn {
namespace F = functional;
}  // namespace ember::nn
