// nn/embedding_bag.cpp: F::embedding_bag (sum, mean and max of bags given as rows of a 2-D input
// or by offsets into a 1-D one, per-sample weights, padding_idx, max_norm) composed of
// index_select, index_add and searchsorted, so every backend and autograd come with it; and
// embedding_renorm_, the max_norm rescaling shared with F::embedding.
#include <limits>

#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm,
                          double norm_type) {
  EMBER_CHECK(max_norm >= 0, "[embedding_renorm_] max_norm must be non-negative, got ", max_norm);
  NoGradGuard no_grad;
  Tensor index = indices.reshape({-1}).to(kInt64);
  Tensor rows = weight.index_select(0, index);
  Tensor norms = linalg::vector_norm(rows, norm_type, {1}, true);
  Tensor scale = where(norms > max_norm, max_norm / (norms + 1e-7), ones_like(norms));
  weight.index_copy_(0, index, rows * scale);
  return weight;
}

namespace {

void check_bag_args(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
  EMBER_CHECK_KIND(DType, input.dtype() == kInt64 || input.dtype() == kInt32,
                   "[embedding_bag] expected input of dtype int64 or int32, got ", input.dtype());
  EMBER_CHECK_KIND(Shape, weight.dim() == 2,
                   "[embedding_bag] weight must be 2-D (num_embeddings, embedding_dim), got ",
                   shape_str(weight.sizes()));
  EMBER_CHECK(o.mode == "sum" || o.mode == "mean" || o.mode == "max",
              "[embedding_bag] mode has to be one of sum, mean or max, got '", o.mode, "'");
  EMBER_CHECK_KIND(Shape, input.dim() == 1 || input.dim() == 2,
                   "[embedding_bag] input has to be 1D or 2D Tensor, but got Tensor of dimension ",
                   input.dim());
  if (input.dim() == 2)
    EMBER_CHECK(!o.offsets.defined(),
                "[embedding_bag] if input is 2D, then offsets has to be undefined, as input is "
                "treated as a mini-batch of fixed length sequences");
  else
    EMBER_CHECK(o.offsets.defined() && o.offsets.dim() == 1,
                "[embedding_bag] offsets has to be a 1D Tensor when input is 1D, got ",
                o.offsets.defined() ? shape_str(o.offsets.sizes()) : std::string("none"));
  if (o.per_sample_weights.defined()) {
    EMBER_CHECK(o.mode == "sum",
                "[embedding_bag] per_sample_weights was given, but it is only supported for "
                "mode='sum' (got mode='",
                o.mode, "'); use mode='sum'");
    EMBER_CHECK_KIND(Shape, o.per_sample_weights.sizes() == input.sizes(),
                     "[embedding_bag] per_sample_weights ", shape_str(o.per_sample_weights.sizes()),
                     " must have the input's shape ", shape_str(input.sizes()));
  }
}

}  // namespace

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
  check_bag_args(input, weight, o);
  if (o.max_norm) {
    Tensor table = weight;
    embedding_renorm_(table, input, *o.max_norm, o.norm_type);
  }
  const auto opts = TensorOptions{.dtype = kInt64, .device = input.device()};
  Tensor index = input.reshape({-1}).to(kInt64);
  const int64_t m = index.numel(), dim = weight.size(1);
  int64_t bags = 0;
  Tensor bag;  // (M) each entry's bag
  if (input.dim() == 2) {
    bags = input.size(0);
    bag = arange(0, m, 1, opts).floor_divide(std::max<int64_t>(input.size(1), 1));
  } else {
    Tensor offsets = o.offsets.to(kInt64);
    bags = offsets.size(0) - (o.include_last_offset ? 1 : 0);
    EMBER_CHECK_KIND(Shape, bags >= 0,
                     "[embedding_bag] include_last_offset needs at least one offset");
    offsets = offsets.narrow(0, 0, bags);
    if (bags > 0) {
      EMBER_CHECK_KIND(Index, offsets.select(0, 0).item<int64_t>() == 0,
                       "[embedding_bag] offsets[0] has to be 0, i.e., the first sequence in the "
                       "mini-batch has to start from position 0. However, got ",
                       offsets.select(0, 0).item<int64_t>());
      EMBER_CHECK_KIND(
          Index,
          bags < 2 ||
              (offsets.narrow(0, 1, bags - 1) >= offsets.narrow(0, 0, bags - 1)).all().item<bool>(),
          "[embedding_bag] offsets must be non-decreasing");
    }
    bag =
        bags > 0 ? searchsorted(offsets, arange(0, m, 1, opts), false, true) - 1 : zeros({0}, opts);
  }
  EMBER_CHECK_KIND(Index, m == 0 || bags > 0, "[embedding_bag] ", m,
                   " indices but no bag (offsets is empty)");
  Tensor keep;  // (M) bool: entries that are not padding_idx
  if (o.padding_idx) keep = index != *o.padding_idx;
  Tensor rows = weight.index_select(0, index);  // (M, dim)
  const auto wopts = TensorOptions{.dtype = weight.dtype(), .device = weight.device()};
  if (o.mode == "max") {
    if (keep.defined())
      rows = where(keep.unsqueeze(1), rows,
                   full({1, 1}, -std::numeric_limits<double>::infinity(), wopts));
    Tensor counts =
        zeros({bags}, opts).index_add(0, bag, keep.defined() ? keep.to(kInt64) : ones({m}, opts));
    Tensor best;
    if (input.dim() == 2) {
      best = std::get<0>(rows.view({bags, input.size(1), dim}).max(1));
    } else {
      const int64_t longest = m == 0 ? 0 : bincount(bag).max().item<int64_t>();
      Tensor pos = arange(0, m, 1, opts) - o.offsets.to(kInt64).index_select(0, bag);
      Tensor dense = full({bags, std::max<int64_t>(longest, 1), dim},
                          -std::numeric_limits<double>::infinity(), wopts);
      best = std::get<0>(index_put(dense, {bag, pos}, rows).max(1));
    }
    return where((counts > 0).unsqueeze(1), best, zeros({1, 1}, wopts));
  }
  // Sums and means of 16-bit rows are taken in float32 and rounded once, as PyTorch's kernel.
  rows = to_opmath(rows);
  const auto sopts = TensorOptions{.dtype = rows.dtype(), .device = weight.device()};
  Tensor scale;  // (M) per-entry factor, or undefined for all ones
  if (o.per_sample_weights.defined()) scale = to_opmath(o.per_sample_weights).reshape({-1});
  if (keep.defined()) scale = scale.defined() ? scale * keep : keep.to(rows.dtype());
  if (scale.defined()) rows = rows * scale.unsqueeze(1);
  Tensor sums = zeros({bags, dim}, sopts).index_add(0, bag, rows);
  if (o.mode == "sum") return sums.to(weight.dtype());
  Tensor counts = zeros({bags}, sopts)
                      .index_add(0, bag, keep.defined() ? keep.to(rows.dtype()) : ones({m}, sopts));
  return (sums / counts.clamp(Scalar(1)).unsqueeze(1)).to(weight.dtype());
}

}  // namespace ember::nn::functional
