// autograd/engine.h: the leaf accumulator node and the engine entry point.
#pragma once

#include <span>
#include <vector>

#include "autograd/meta.h"

namespace ember::autograd {

// The node at a leaf that requires grad: adds incoming gradients into the leaf's grad.
// Runs the leaf's hooks (Tensor::register_hook) before accumulating and its post-accumulate
// hooks after.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(const std::shared_ptr<TensorImpl>& leaf)
      : Node({}, 1, kAccumulateSequenceNr), leaf_(leaf) {}
  std::vector<Tensor> apply(std::span<Tensor> grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  // The leaf's hooks (Tensor::register_hook on a leaf), on the incoming gradient.
  void run_leaf_hooks(std::span<Tensor> grads);

 private:
  std::weak_ptr<TensorImpl> leaf_;
};

// The gradient autograd::grad wants: the one arriving at input `input_nr` of node `fn`.
struct Capture {
  Node* fn;
  uint32_t input_nr;
  Tensor grad;
};

// Runs backward from roots. accumulate=false skips leaf accumulation (autograd::grad); captured,
// when given, receives the gradients it asks for.
void run_backward(const std::vector<Edge>& roots, const std::vector<Tensor>& root_grads,
                  bool retain_graph, bool accumulate, std::vector<Capture>* captured);

}  // namespace ember::autograd
