// ember/tensor.h: the Tensor handle -- a view (sizes, strides, offset, dtype) of shared storage on
// a device -- with PyTorch's method names. The free functions behind the methods are in ops.h.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/scalar.h"
#include "ember/shape.h"
#include "ember/storage.h"

namespace ember {

namespace autograd {
class Node;
class HookHandle;
struct AutogradMeta;
}  // namespace autograd

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape sizes;
  Shape strides;       // in elements
  int64_t offset = 0;  // in elements
  DType dtype = kFloat32;
  bool wrapped_number = false;  // a Scalar turned into a 0-dim tensor, for type promotion
  std::shared_ptr<autograd::AutogradMeta> autograd;  // null until autograd is involved
  std::shared_ptr<TensorImpl> view_base;             // views: the tensor whose storage they view

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  void* data() const {
    return static_cast<char*>(storage->data()) + offset * static_cast<int64_t>(element_size(dtype));
  }
};

class Tensor;
namespace cuda {
class Stream;
}  // namespace cuda
namespace indexing {
struct NoneIndex {};
struct EllipsisIndex {};
// Slice(start, stop, step); an omitted bound is std::nullopt or None, as in Slice(1, None).
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  Slice(std::optional<int64_t> start_ = std::nullopt, std::optional<int64_t> stop_ = std::nullopt,
        int64_t step_ = 1)
      : start(start_), stop(stop_), step(step_) {}
  Slice(NoneIndex, std::optional<int64_t> stop_ = std::nullopt, int64_t step_ = 1)
      : stop(stop_), step(step_) {}
  Slice(std::optional<int64_t> start_, NoneIndex, int64_t step_ = 1) : start(start_), step(step_) {}
  Slice(NoneIndex, NoneIndex, int64_t step_ = 1) : step(step_) {}
};
inline constexpr NoneIndex None{};
inline constexpr EllipsisIndex Ellipsis{};
// One entry of t.index({...}): an integer, a Slice, None (new axis) or Ellipsis.
class TensorIndex {
 public:
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}      // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}        // NOLINT
  TensorIndex(NoneIndex) : kind_(Kind::None) {}                  // NOLINT
  TensorIndex(EllipsisIndex) : kind_(Kind::Ellipsis) {}          // NOLINT
  enum class Kind { Integer, Slice, None, Ellipsis };
  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
};
}  // namespace indexing

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // --- metadata
  bool defined() const { return impl_ != nullptr; }
  const Shape& sizes() const { return impl().sizes; }
  const Shape& shape() const { return impl().sizes; }
  const Shape& strides() const { return impl().strides; }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(impl().sizes.size()); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl().numel(); }
  int64_t storage_offset() const { return impl().offset; }
  DType dtype() const { return impl().dtype; }
  DType scalar_type() const { return impl().dtype; }
  Device device() const { return impl().storage->device(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  bool is_contiguous() const;
  size_t element_size() const { return ember::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }
  // Whether both handles are the same tensor (not just equal values).
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  TensorImpl& impl() const {
    EMBER_CHECK(impl_ != nullptr, "[Tensor] this tensor is undefined (default-constructed)");
    return *impl_;
  }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // --- autograd (see autograd.h)
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  // The accumulated gradient of a leaf (undefined until backward reaches it).
  const Tensor& grad() const;
  Tensor& mutable_grad();
  std::shared_ptr<autograd::Node> grad_fn() const;
  bool is_leaf() const;
  // Gradient of this tensor w.r.t. the leaves; `gradient` may be omitted for one-element tensors.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;
  // The same data, cut from the graph (shares storage).
  Tensor detach() const;
  Tensor& detach_();
  // Keeps grad() for a non-leaf tensor after backward.
  void retain_grad() const;
  bool retains_grad() const;
  // torch.Tensor.register_hook: hook(grad) runs each time the gradient of this tensor is computed
  // and may return a replacement (an undefined Tensor keeps it); on a leaf it runs before the
  // gradient is accumulated into grad(). Hooks run in the order registered; remove() on the
  // returned handle unregisters it. The tensor must require grad.
  autograd::HookHandle register_hook(std::function<Tensor(const Tensor&)> hook) const;
  // torch.Tensor.register_post_accumulate_grad_hook: leaves only; hook(*this) runs after
  // backward has accumulated into grad() (not for autograd::grad, which accumulates nothing).
  autograd::HookHandle register_post_accumulate_grad_hook(
      std::function<void(const Tensor&)> hook) const;
  // Replaces this tensor's data (storage, sizes, dtype, device) keeping its identity and autograd
  // state, as Module::to does for parameters.
  void set_data(const Tensor& new_data) const;
  uint64_t _version() const { return impl().storage->version(); }

  // --- host access (the tutorial's "Moving Tensors Back to CPU")
  Scalar item() const;  // copies the one value back from any device
  template <class T>
  T item() const {
    return item().to<T>();
  }
  template <class T>
  std::vector<T> to_vector() const;  // CPU tensors only; converts to T
  template <class T>
  T* data_ptr() const;  // CPU tensors only; T must match the dtype
  void* raw_data_ptr() const;

  // --- moving between devices and dtypes; returns *this when nothing changes (unless copy)
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor to(DType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor cuda(int index = -1) const { return to(Device(kCUDA, index)); }
  Tensor clone() const;
  Tensor contiguous() const;
  // A copy in page-locked (pinned) host memory, from which to(cuda, non_blocking=true) copies
  // asynchronously; *this when already pinned. CPU tensors only; needs CUDA and a GPU.
  Tensor pin_memory() const;
  bool is_pinned() const;
  // torch.Tensor.record_stream: tells the CUDA caching allocator that work queued on `stream`
  // uses this tensor's memory, so when the memory is freed it is not handed out again before
  // that stream's work queued so far has finished. CUDA tensors only.
  void record_stream(const cuda::Stream& stream) const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false);

  // --- views (share storage)
  Tensor view(const Shape& shape) const;
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape(const Shape& shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor permute(const Shape& dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  // Several views at once (see ops.h).
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(const std::vector<int64_t>& split_sizes,
                                       int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor expand(const Shape& sizes) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  Tensor operator[](int64_t i) const { return select(0, i); }

  // --- element-wise (see ops.h for the semantics)
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor div(const Tensor& other) const;
  Tensor add(const Scalar& other) const;
  Tensor sub(const Scalar& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Scalar& other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor gelu(const std::string& approximate = "none") const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_not() const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;

  // --- in place; the result must be castable to this tensor's dtype and shape
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& other);
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor& fill_(const Scalar& value);
  Tensor& zero_() { return fill_(0); }
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);

  // --- reductions
  Tensor sum(std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(const Shape& dims, bool keepdim = false,
             std::optional<DType> dtype = std::nullopt) const;
  Tensor mean() const;
  Tensor mean(const Shape& dims, bool keepdim = false) const;
  Tensor prod() const;
  Tensor prod(int64_t dim, bool keepdim = false) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(const Shape& dims, bool keepdim = false) const;
  Tensor amin(const Shape& dims, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(const Shape& dims = {}, bool unbiased = true, bool keepdim = false) const;
  Tensor std(const Shape& dims = {}, bool unbiased = true, bool keepdim = false) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor logsumexp(const Shape& dims, bool keepdim = false) const;

  // --- linear algebra and indexing
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;

  // PyTorch's repr: "tensor([1., 2., 3.])".
  std::string str() const;

 private:
  // copy_ without the autograd and version bookkeeping.
  void copy_data(const Tensor& src, bool non_blocking) const;
  // src read as `sizes` in `dtype` on `device` (default: src's device), as a new tensor.
  static Tensor converted(const Tensor& src, const Shape& sizes, DType dtype,
                          std::optional<Device> device = std::nullopt);

  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

namespace detail {
[[noreturn]] void throw_not_on_host(const char* op, const Tensor& t);
[[noreturn]] void throw_dtype_mismatch(const char* op, DType expected, DType actual);
}  // namespace detail

template <class T>
T* Tensor::data_ptr() const {
  if (!is_cpu()) detail::throw_not_on_host("data_ptr", *this);
  if (dtype_of<T>() != dtype()) detail::throw_dtype_mismatch("data_ptr", dtype_of<T>(), dtype());
  return static_cast<T*>(impl().data());
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  if (!is_cpu()) detail::throw_not_on_host("to_vector", *this);
  Tensor c = to(dtype_of<T>()).contiguous();
  const T* p = static_cast<const T*>(c.impl().data());
  return std::vector<T>(p, p + c.numel());
}

}  // namespace ember
