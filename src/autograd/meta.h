// autograd/meta.h: what a tensor carries for autograd -- requires_grad, grad, grad_fn.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "ember/autograd.h"
#include "ember/tensor.h"

namespace ember::autograd {

struct AutogradMeta {
  bool requires_grad = false;  // set on leaves by the user, on outputs by record()
  bool retains_grad = false;
  uint32_t output_nr = 0;  // which output of grad_fn this tensor is
  // One of several views a function returned (split, chunk, unbind): no in-place changes.
  bool multi_output_view = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;         // null for leaves
  std::weak_ptr<Node> grad_accumulator;  // leaves: the node that adds into grad
  // Leaves' hooks (a non-leaf's live on its grad_fn): on the incoming gradient, before it is
  // accumulated, and after.
  std::vector<std::pair<uint64_t, GradHook>> hooks;
  std::vector<std::pair<uint64_t, std::function<void(const Tensor&)>>> post_accumulate_hooks;
};

// The tensor's meta, created on first use.
AutogradMeta& meta_of(const Tensor& t);
// The tensor's meta or null, without creating one.
inline AutogradMeta* meta_if(const Tensor& t) {
  return t.impl().autograd.get();
}

}  // namespace ember::autograd
