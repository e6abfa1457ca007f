// ops/search.cpp: searchsorted and bucketize -- the dtype rule (the sequence and the values
// promoted to one dtype), the shape rule (a 1-D sequence for every value, or one sorted row per
// row of values with the same leading dims), `side` against `right`, the optional sorter, and
// the backend's binary search. Indices are int64, or int32 with out_int32.
#include "ops/op_helpers.h"

namespace ember {

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& input, bool out_int32, bool right,
                    const std::string& side, const Tensor& sorter) {
  EMBER_CHECK_KIND(Value, side.empty() || side == "left" || side == "right",
                   "[searchsorted] side must be \"left\" or \"right\", got \"", side, "\"");
  EMBER_CHECK_KIND(Value, !(right && side == "left"),
                   "[searchsorted] side \"left\" and right=true disagree; pass one of them");
  const bool upper = right || side == "right";
  const Device dev = operand_device("searchsorted", {&sorted_sequence, &input});
  EMBER_CHECK_KIND(Shape, sorted_sequence.dim() >= 1,
                   "[searchsorted] sorted_sequence must have at least one dim, got a 0-dim tensor");
  const bool shared = sorted_sequence.dim() == 1;
  if (!shared) {
    Shape lead_s = sorted_sequence.sizes(), lead_v = input.sizes();
    lead_s.pop_back();
    if (!lead_v.empty()) lead_v.pop_back();
    EMBER_CHECK_KIND(Shape, input.dim() == sorted_sequence.dim() && lead_s == lead_v,
                     "[searchsorted] sorted_sequence of shape ", shape_str(sorted_sequence.sizes()),
                     " needs values with the same leading dims (all but the last), got ",
                     shape_str(input.sizes()), "; or pass a 1-D sorted_sequence");
  }
  Tensor seq = sorted_sequence;
  if (sorter.defined()) {
    EMBER_CHECK_KIND(DType, sorter.dtype() == kInt64, "[searchsorted] sorter must be int64, got ",
                     sorter.dtype());
    EMBER_CHECK_KIND(Shape, sorter.sizes() == sorted_sequence.sizes(),
                     "[searchsorted] sorter of shape ", shape_str(sorter.sizes()),
                     " must have sorted_sequence's shape ", shape_str(sorted_sequence.sizes()));
    seq = gather(sorted_sequence, -1, on_device(sorter, dev));
  }
  NoGradGuard no_grad;
  const DType common = result_type_of({&seq, &input});
  const Tensor s = seq.to(common).contiguous(), v = input.to(common).contiguous();
  Tensor out = make_tensor(v.sizes(), kInt64, dev);
  if (out.numel() > 0)
    backend_for(dev.type()).searchsorted(view_of(out), view_of(s), view_of(v), upper);
  return out_int32 ? out.to(kInt32) : out;
}

Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& value, bool out_int32, bool right,
                    const std::string& side, const Tensor& sorter) {
  return searchsorted(sorted_sequence, wrap_scalar(value, sorted_sequence.device()), out_int32,
                      right, side, sorter);
}

Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_CHECK_KIND(Shape, boundaries.dim() == 1, "[bucketize] boundaries must be 1-D, got shape ",
                   shape_str(boundaries.sizes()));
  return searchsorted(boundaries, input, out_int32, right);
}

Tensor bucketize(const Scalar& input, const Tensor& boundaries, bool out_int32, bool right) {
  return bucketize(wrap_scalar(input, boundaries.device()), boundaries, out_int32, right);
}

}  // namespace ember
