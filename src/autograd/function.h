// autograd/function.h: how op definitions record themselves for backward. An op that computed
// `out` from `inputs` calls record() with a closure mapping d(out) to one gradient per input;
// the closure captures what it needs as SavedTensors, which detect later in-place changes.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <type_traits>
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
// Undefined inputs (an absent bias) are skipped.
inline bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor* t : inputs) {
    const auto& impl = t->impl_ptr();
    if (impl && impl->autograd && impl->autograd->requires_grad) return true;
  }
  return false;
}

[[noreturn]] void throw_freed(const char* name);

// The node record() makes: a named closure F, freed by release(). With one output F takes its
// gradient (const Tensor&); with several, all of them (std::span<Tensor>, undefined for zero).
template <class F>
class LambdaNode : public Node {
 public:
  LambdaNode(const char* name, std::vector<Edge> edges, F fn, uint32_t num_outputs = 1)
      : Node(std::move(edges), num_outputs), name_(name), fn_(std::move(fn)) {}
  std::vector<Tensor> apply(std::span<Tensor> grads) override {
    if (!fn_) throw_freed(name_);
    if constexpr (std::is_invocable_v<F&, std::span<Tensor>>)
      return (*fn_)(grads);
    else
      return (*fn_)(grads[0]);
  }
  std::string name() const override { return name_; }
  void release() override { fn_.reset(); }

 private:
  const char* name_;
  std::optional<F> fn_;
};

std::vector<Edge> collect_edges(const Tensor* first, std::initializer_list<const Tensor*> rest);
// Gives `out` the history `node`, as its output `output_nr` (and detaches it from a base outside
// the graph).
void attach(const Tensor& out, std::shared_ptr<Node> node, uint32_t output_nr = 0);

// Makes `out` the output of a node `name` over `inputs`; fn gives one gradient per input
// (undefined for none). Does nothing unless needs_grad(inputs).
template <class F>
void record(const char* name, std::initializer_list<const Tensor*> inputs, const Tensor& out,
            F&& fn) {
  if (!needs_grad(inputs) || !out.is_floating_point()) return;
  attach(out, make_cached_shared<LambdaNode<std::decay_t<F>>>(name, collect_edges(nullptr, inputs),
                                                              std::forward<F>(fn)));
}

// Makes `outputs` the outputs 0, 1, ... of one node `name` over `inputs`; fn maps their gradients
// (std::span<Tensor>, one per output, undefined for zero) to one gradient per input. Outputs that
// are not floating point get no history. Does nothing unless needs_grad(inputs). When
// `outputs_are_views` (split, chunk, unbind), in-place changes to the outputs are refused, as
// PyTorch refuses them for functions returning several views.
template <class F>
void record_multi(const char* name, std::initializer_list<const Tensor*> inputs,
                  const std::vector<Tensor>& outputs, bool outputs_are_views, F&& fn) {
  if (!needs_grad(inputs)) return;
  auto node = make_cached_shared<LambdaNode<std::decay_t<F>>>(
      name, collect_edges(nullptr, inputs), std::forward<F>(fn),
      static_cast<uint32_t>(outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].is_floating_point()) continue;
    attach(outputs[i], node, static_cast<uint32_t>(i));
    if (outputs_are_views) meta_of(outputs[i]).multi_output_view = true;
  }
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
