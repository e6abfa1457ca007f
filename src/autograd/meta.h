// autograd/meta.h: what a tensor carries for autograd -- requires_grad, grad, grad_fn.
#pragma once

#include <memory>

#include "ember/autograd.h"
#include "ember/tensor.h"

namespace ember::autograd {

struct AutogradMeta {
  bool requires_grad = false;  // set on leaves by the user, on outputs by record()
  bool retains_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;         // null for leaves
  std::weak_ptr<Node> grad_accumulator;  // leaves: the node that adds into grad
};

// The tensor's meta, created on first use.
AutogradMeta& meta_of(const Tensor& t);
// The tensor's meta or null, without creating one.
inline AutogradMeta* meta_if(const Tensor& t) {
  return t.impl().autograd.get();
}

}  // namespace ember::autograd
