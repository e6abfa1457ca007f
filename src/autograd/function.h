// autograd/function.h: how op definitions record themselves for backward. An op that computed
// `out` from `inputs` calls record() with a closure mapping d(out) to one gradient per input;
// the closure captures what it needs as SavedTensors, which detect later in-place changes.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <vector>

#include "autograd/meta.h"
#include "core/host_allocator.h"

namespace ember::autograd {

// A tensor kept for backward and the version it had. An op's own output is kept without its
// history (keeping the history would make the node own itself); inputs are kept as they are.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t, bool is_output = false);
  // The saved data; throws PyTorch's in-place modification error if it changed since saving.
  Tensor unpack() const;

 private:
  Tensor data_;
  uint64_t version_ = 0;
};

using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad)>;

// Whether recording is on and any input requires grad -- the cheap test every op makes first.
inline bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor* t : inputs) {
    const auto* m = t->impl().autograd.get();
    if (m && m->requires_grad) return true;
  }
  return false;
}

[[noreturn]] void throw_freed(const char* name);

// The node record() makes: a named closure F, freed by release().
template <class F>
class LambdaNode : public Node {
 public:
  LambdaNode(const char* name, std::vector<Edge> edges, F fn)
      : Node(std::move(edges)), name_(name), fn_(std::move(fn)) {}
  std::vector<Tensor> apply(const Tensor& grad_output) override {
    if (!fn_) throw_freed(name_);
    return (*fn_)(grad_output);
  }
  std::string name() const override { return name_; }
  void release() override { fn_.reset(); }

 private:
  const char* name_;
  std::optional<F> fn_;
};

std::vector<Edge> collect_edges(const Tensor* first, std::initializer_list<const Tensor*> rest);
// Gives `out` the history `node` (and detaches it from a base outside the graph).
void attach(const Tensor& out, std::shared_ptr<Node> node);

// Makes `out` the output of a node `name` over `inputs`; fn gives one gradient per input
// (undefined for none). Does nothing unless needs_grad(inputs).
template <class F>
void record(const char* name, std::initializer_list<const Tensor*> inputs, const Tensor& out,
            F&& fn) {
  if (!needs_grad(inputs) || !out.is_floating_point()) return;
  attach(out, make_cached_shared<LambdaNode<std::decay_t<F>>>(name, collect_edges(nullptr, inputs),
                                                              std::forward<F>(fn)));
}

// For an op that changed `self` in place using `others`: self's history becomes the op, whose
// gradient closure returns {grad for self's old value, grads for others...}. Handles views of
// tensors in the graph by rewriting the base's history.
void record_inplace(const char* name, const Tensor& self,
                    std::initializer_list<const Tensor*> others, BackwardFn fn);

// Throws PyTorch's errors for in-place changes autograd can't allow (a leaf that requires grad,
// or a view of one).
void check_inplace(const char* name, const Tensor& self);

// Where the gradient of t goes: its grad_fn, its leaf accumulator, or nowhere (fn null).
Edge gradient_edge(const Tensor& t);

// Sums grad over broadcast dims so it has `shape` again.
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace ember::autograd
