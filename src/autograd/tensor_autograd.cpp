// autograd/tensor_autograd.cpp: Tensor's autograd methods -- requires_grad, grad, backward, detach.
#include "autograd/function.h"
#include "autograd/meta.h"
#include "core/host_allocator.h"
#include "ember/ops.h"

namespace ember {

using autograd::meta_if;
using autograd::meta_of;

bool Tensor::requires_grad() const {
  const auto* m = meta_if(*this);
  return m && m->requires_grad;
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  auto* m = meta_if(*this);
  if (!requires_grad && !m) return *this;
  EMBER_CHECK_KIND(DType, !requires_grad || is_floating_point(),
                   "[requires_grad_] only Tensors of "
                   "floating point dtype can require gradients; this one is ",
                   dtype(), ". Convert it first with .to(ember::kFloat32)");
  EMBER_CHECK(requires_grad || !(m && m->grad_fn),
              "[requires_grad_] you can only change "
              "requires_grad flags of leaf variables. If you want to use a computed variable in a "
              "subgraph that doesn't require differentiation use detach().");
  meta_of(*this).requires_grad = requires_grad;
  return *this;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  const auto* m = meta_if(*this);
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() {
  return meta_of(*this).grad;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  const auto* m = meta_if(*this);
  return m ? m->grad_fn : nullptr;
}

bool Tensor::is_leaf() const {
  return grad_fn() == nullptr;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  autograd::backward({*this},
                     gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{},
                     retain_graph);
}

Tensor Tensor::detach() const {
  auto impl = make_cached_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->sizes = impl_->sizes;
  impl->strides = impl_->strides;
  impl->offset = impl_->offset;
  impl->dtype = impl_->dtype;
  return Tensor(std::move(impl));
}

Tensor& Tensor::detach_() {
  if (auto* m = meta_if(*this)) {
    m->grad_fn = nullptr;
    m->requires_grad = false;
  }
  return *this;
}

void Tensor::retain_grad() const {
  auto fn = grad_fn();
  if (!fn) {
    EMBER_CHECK(requires_grad(),
                "[retain_grad] can't retain_grad on Tensor that has "
                "requires_grad=false");
    return;  // leaves keep their grad anyway
  }
  auto& m = meta_of(*this);
  if (m.retains_grad) return;
  m.retains_grad = true;
  fn->retained_grads().push_back(impl_);
}

bool Tensor::retains_grad() const {
  const auto* m = meta_if(*this);
  return m && m->retains_grad;
}

void Tensor::set_data(const Tensor& new_data) const {
  TensorImpl& i = impl();
  const TensorImpl& n = new_data.impl();
  i.storage = n.storage;
  i.sizes = n.sizes;
  i.strides = n.strides;
  i.offset = n.offset;
  i.dtype = n.dtype;
}

}  // namespace ember
