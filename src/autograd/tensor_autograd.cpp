// autograd/tensor_autograd.cpp: Tensor's autograd methods -- requires_grad, grad, backward, detach.
#include "autograd/function.h"
#include "autograd/meta.h"
#include "core/host_allocator.h"

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
  fn->retained_grads().emplace_back(m.output_nr, impl_);
}

autograd::HookHandle Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  EMBER_CHECK(requires_grad(),
              "[register_hook] cannot register a hook on a tensor that doesn't require "
              "gradient; call requires_grad_() on it (or on what it is computed from) first");
  EMBER_CHECK(hook != nullptr, "[register_hook] the hook is empty");
  if (auto fn = grad_fn()) {
    uint64_t id = fn->add_hook(meta_of(*this).output_nr, std::move(hook));
    return autograd::HookHandle([weak = std::weak_ptr<autograd::Node>(fn), id] {
      if (auto node = weak.lock()) node->remove_hook(id);
    });
  }
  uint64_t id = autograd::next_hook_id();
  meta_of(*this).hooks.emplace_back(id, std::move(hook));
  return autograd::HookHandle([weak = std::weak_ptr<TensorImpl>(impl_), id] {
    if (auto impl = weak.lock(); impl && impl->autograd)
      std::erase_if(impl->autograd->hooks, [id](const auto& h) { return h.first == id; });
  });
}

autograd::HookHandle Tensor::register_post_accumulate_grad_hook(
    std::function<void(const Tensor&)> hook) const {
  EMBER_CHECK(requires_grad(),
              "[register_post_accumulate_grad_hook] cannot register a hook on a tensor that "
              "doesn't require gradient; call requires_grad_() on it first");
  EMBER_CHECK(is_leaf(),
              "[register_post_accumulate_grad_hook] post accumulate grad hooks cannot be "
              "registered on non-leaf tensors (they have no grad to accumulate into); use "
              "register_hook instead");
  EMBER_CHECK(hook != nullptr, "[register_post_accumulate_grad_hook] the hook is empty");
  uint64_t id = autograd::next_hook_id();
  meta_of(*this).post_accumulate_hooks.emplace_back(id, std::move(hook));
  return autograd::HookHandle([weak = std::weak_ptr<TensorImpl>(impl_), id] {
    if (auto impl = weak.lock(); impl && impl->autograd)
      std::erase_if(impl->autograd->post_accumulate_hooks,
                    [id](const auto& h) { return h.first == id; });
  });
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

std::shared_ptr<autograd::Node> autograd::grad_accumulator(const Tensor& leaf) {
  EMBER_CHECK(leaf.defined() && leaf.requires_grad() && leaf.is_leaf(),
              "[grad_accumulator] only leaves that require grad have a gradient accumulator; "
              "this tensor ",
              !leaf.defined()        ? "is undefined"
              : leaf.requires_grad() ? "has a grad_fn"
                                     : "does not require grad");
  return gradient_edge(leaf).fn;
}

}  // namespace ember
