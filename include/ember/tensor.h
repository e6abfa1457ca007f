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
class Generator;
namespace detail {
using TensorPair = std::tuple<Tensor, Tensor>;  // (values, indices) of max and min over a dim
// (values, inverse, counts) of unique and unique_consecutive
using TensorTriple = std::tuple<Tensor, Tensor, Tensor>;
}  // namespace detail
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
  // self[indices] = values (ember/ops.h's index_put), in place.
  Tensor& index_put_(const std::vector<Tensor>& indices, const Tensor& values,
                     bool accumulate = false);
  // Random fills in place and multinomial draws (ops/distributions.cpp, ember/creation.h).
  Tensor& uniform_(double from = 0, double to = 1, Generator* gen = nullptr);
  Tensor& normal_(double mean = 0, double std = 1, Generator* gen = nullptr);
  Tensor& bernoulli_(double p = 0.5, Generator* gen = nullptr);
  Tensor& exponential_(double lambd = 1, Generator* gen = nullptr);
  Tensor multinomial(int64_t num_samples, bool replacement = false, Generator* gen = nullptr) const;

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
  Tensor expand(const Shape& sizes) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  Tensor operator[](int64_t i) const { return select(0, i); }

  // --- in place, methods only
  Tensor& fill_(const Scalar& value);
  Tensor& zero_() { return fill_(0); }

  // --- the ops of ember/op_variants.def (semantics noted there): a method per overload with
  // `method` or `scalar`, an in-place method per `inplace` or `scalar_inplace`. In place, the
  // result must be castable to this tensor's dtype and shape.
#define EMBER_OP_METHOD(ret, name, params, args) ret name(EMBER_OP_PARAMS params) const;
#define EMBER_OP_INPLACE(ret, name, params, args) ret& name##_(EMBER_OP_PARAMS params);
#define EMBER_OP_SCALAR(ret, name, params, args) ret name(const Scalar& other) const;
#define EMBER_OP_SCALAR_INPLACE(ret, name, params, args) ret& name##_(const Scalar& other);
#define EMBER_OP_DEFAULT(value) = value
#include "ember/op_variants.def"

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
