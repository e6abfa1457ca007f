// ops/indexing.cpp: t.index({0, Slice(1, None), None, Ellipsis}) -- basic indexing as views.
#include "core/shape.h"
#include "ember/tensor.h"

namespace ember {

using indexing::TensorIndex;

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return index(std::vector<TensorIndex>(indices));
}

Tensor Tensor::index(const std::vector<TensorIndex>& indices) const {
  int64_t consumed = 0, ellipses = 0;
  for (const auto& i : indices) {
    if (i.kind() == TensorIndex::Kind::Integer || i.kind() == TensorIndex::Kind::Slice) ++consumed;
    if (i.kind() == TensorIndex::Kind::Ellipsis) ++ellipses;
  }
  EMBER_CHECK_KIND(Index, ellipses <= 1,
                   "[index] an index can only have a single ellipsis ('...')");
  EMBER_CHECK_KIND(Index, consumed <= dim(), "[index] too many indices for tensor of dimension ",
                   dim(), " (got ", consumed, ")");
  Tensor out = *this;
  int64_t d = 0;  // the dim of `out` the next index applies to
  for (const auto& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::Integer:
        out = out.select(d, i.integer());
        break;
      case TensorIndex::Kind::Slice:
        out = out.slice(d, i.slice().start, i.slice().stop, i.slice().step);
        ++d;
        break;
      case TensorIndex::Kind::None:
        out = out.unsqueeze(d);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis:
        d += dim() - consumed;
        break;
    }
  }
  return out;
}

}  // namespace ember
