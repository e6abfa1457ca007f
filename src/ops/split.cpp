// ops/split.cpp: split, split_with_sizes, chunk and unbind -- several views of one tensor, backed
// by one multi-output autograd node: the gradients of the pieces (zero for pieces that got none)
// are joined back into one gradient of the input.
#include <vector>

#include "autograd/function.h"
#include "core/make_tensor.h"
#include "core/shape.h"
#include "ember/creation.h"
#include "ember/ops.h"

namespace ember {

namespace {

// What backward needs of the pieces: their shapes, dtype and device (not the pieces themselves,
// which hold the node: that would be a cycle).
struct PieceShapes {
  std::vector<Shape> shapes;
  DType dtype;
  Device device;
  explicit PieceShapes(const std::vector<Tensor>& pieces, const Tensor& x)
      : dtype(x.dtype()), device(x.device()) {
    for (const Tensor& p : pieces) shapes.push_back(p.sizes());
  }
  // The gradients of the pieces, zeros where a piece got none.
  std::vector<Tensor> filled(std::span<Tensor> grads) const {
    std::vector<Tensor> g(grads.begin(), grads.end());
    for (size_t i = 0; i < g.size(); ++i)
      if (!g[i].defined()) g[i] = zeros(shapes[i], {.dtype = dtype, .device = device});
    return g;
  }
};

}  // namespace

std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& split_sizes,
                                     int64_t dim) {
  EMBER_CHECK_KIND(Shape, x.dim() > 0, "[split_with_sizes] cannot split a 0-dim tensor");
  dim = wrap_dim("split_with_sizes", dim, x.dim());
  const int64_t size = x.size(dim);
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    EMBER_CHECK(s >= 0,
                "[split_with_sizes] expects split_sizes have only non-negative entries, "
                "but got split_sizes=",
                shape_str(split_sizes));
    total += s;
  }
  EMBER_CHECK(total == size, "[split_with_sizes] expects split_sizes to sum exactly to ", size,
              " (input tensor's size at dimension ", dim,
              "), but got split_sizes=", shape_str(split_sizes));
  std::vector<Tensor> pieces;
  pieces.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    Shape sizes = x.sizes();
    sizes[dim] = s;
    pieces.push_back(
        make_view(x, std::move(sizes), x.strides(), x.storage_offset() + start * x.stride(dim)));
    start += s;
  }
  autograd::record_multi("SplitWithSizesBackward0", {&x}, pieces, true,
                         [shapes = PieceShapes(pieces, x), dim](std::span<Tensor> grads) {
                           return std::vector<Tensor>{cat(shapes.filled(grads), dim)};
                         });
  return pieces;
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  EMBER_CHECK_KIND(Shape, x.dim() > 0, "[split] cannot split a 0-dim tensor");
  dim = wrap_dim("split", dim, x.dim());
  const int64_t size = x.size(dim);
  EMBER_CHECK(split_size >= 0, "[split] split_size must be non-negative, got ", split_size);
  EMBER_CHECK(split_size > 0 || size == 0,
              "[split] split_size can only be 0 if dimension size is 0, but got dimension size "
              "of ",
              size);
  int64_t n = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<int64_t> sizes(n, split_size);
  sizes.back() = split_size - (split_size * n - size);
  return split_with_sizes(x, sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  EMBER_CHECK_KIND(Shape, x.dim() > 0, "[chunk] cannot chunk a 0-dim tensor");
  EMBER_CHECK(chunks > 0, "[chunk] expects `chunks` to be greater than 0, got: ", chunks);
  dim = wrap_dim("chunk", dim, x.dim());
  const int64_t size = x.size(dim);
  int64_t split_size = (size + chunks - 1) / chunks;
  // An empty dim still gives `chunks` (empty) pieces, as PyTorch.
  if (size == 0) return split_with_sizes(x, std::vector<int64_t>(chunks, 0), dim);
  return split(x, split_size, dim);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  EMBER_CHECK_KIND(Index, x.dim() > 0, "[unbind] Dimension specified as ", dim,
                   " but tensor has no dimensions");
  dim = wrap_dim("unbind", dim, x.dim());
  Shape sizes = x.sizes(), strides = x.strides();
  const int64_t n = sizes[dim], stride = strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  std::vector<Tensor> pieces;
  pieces.reserve(n);
  for (int64_t i = 0; i < n; ++i)
    pieces.push_back(make_view(x, sizes, strides, x.storage_offset() + i * stride));
  autograd::record_multi("UnbindBackward0", {&x}, pieces, true,
                         [shapes = PieceShapes(pieces, x), dim](std::span<Tensor> grads) {
                           return std::vector<Tensor>{stack(shapes.filled(grads), dim)};
                         });
  return pieces;
}

}  // namespace ember
