// ops/repeat_interleave.cpp: torch.repeat_interleave -- the elements repeated in place along a
// dim. The repeated positions become one int64 index (a cumsum of the counts and a searchsorted)
// for index_select, so every backend runs it and its gradient is index_select's.
#include "ops/op_helpers.h"

namespace ember {

namespace {

// repeats (n): int64 counts -> the positions 0..n-1, position i repeats[i] times; the result's
// length is output_size when given (no look at the values then, as PyTorch).
Tensor repeated_positions(const Tensor& repeats, std::optional<int64_t> output_size) {
  EMBER_CHECK_KIND(Shape, repeats.dim() == 1,
                   "[repeat_interleave] repeats must be a 1-D tensor of counts, got shape ",
                   shape_str(repeats.sizes()));
  EMBER_CHECK_KIND(DType, repeats.dtype() == kInt64 || repeats.dtype() == kInt32,
                   "[repeat_interleave] repeats has to be an int64 or int32 tensor, got ",
                   repeats.dtype());
  const TensorOptions index{.dtype = kInt64, .device = repeats.device()};
  if (repeats.numel() == 0) return zeros({0}, index);
  Tensor ends = cumsum(repeats.to(kInt64), 0);
  int64_t total = 0;
  if (output_size) {
    EMBER_CHECK(*output_size >= 0, "[repeat_interleave] output_size must be >= 0, got ",
                *output_size);
    total = *output_size;
  } else {
    EMBER_CHECK(!lt(repeats, 0).any().item<bool>(),
                "[repeat_interleave] repeats can not be negative");
    total = ends[-1].item<int64_t>();
  }
  // Output position j comes from the first i whose running total ends[i] exceeds j.
  return searchsorted(ends, arange(total, index), false, true);
}

// Along dim of x (the flattened x without one): index_select at the repeated positions.
Tensor select_repeated(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim,
                       std::optional<int64_t> output_size) {
  const Tensor input = dim ? x : x.reshape({-1});
  const int64_t d = dim ? wrap_dim_of("repeat_interleave", x, *dim) : 0;
  const int64_t n = input.dim() == 0 ? 1 : input.size(d);
  Tensor counts = on_device(repeats, x.device());
  if (counts.dim() == 0 || (counts.dim() == 1 && counts.size(0) == 1))
    counts = counts.reshape({1}).expand({n});
  EMBER_CHECK_KIND(Shape, counts.dim() != 1 || counts.size(0) == n,
                   "[repeat_interleave] repeats must have the same size as input along dim, but "
                   "got repeats.size(0) = ",
                   counts.size(0), " and input.size(", d, ") = ", n);
  return index_select(input, d, repeated_positions(counts, output_size));
}

}  // namespace

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  return repeated_positions(repeats, output_size);
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  return select_repeated(x, repeats, dim, output_size);
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  EMBER_CHECK(repeats >= 0, "[repeat_interleave] repeats can not be negative, got ", repeats);
  return select_repeated(x, scalar_tensor(repeats, {.dtype = kInt64, .device = x.device()}), dim,
                         output_size);
}

}  // namespace ember
