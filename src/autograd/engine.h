// autograd/engine.h: the leaf accumulator node and the engine entry point.
#pragma once

#include <unordered_map>

#include "autograd/meta.h"

namespace ember::autograd {

// The node at a leaf that requires grad: adds incoming gradients into the leaf's grad.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(const std::shared_ptr<TensorImpl>& leaf) : Node({}), leaf_(leaf) {}
  std::vector<Tensor> apply(const Tensor& grad) override;
  std::string name() const override { return "AccumulateGrad"; }

 private:
  std::weak_ptr<TensorImpl> leaf_;
};

// Runs backward from roots. accumulate=false skips leaf accumulation (autograd::grad); captured,
// when given, receives the gradient arriving at each node it lists.
void run_backward(const std::vector<Edge>& roots, const std::vector<Tensor>& root_grads,
                  bool retain_graph, bool accumulate, std::unordered_map<Node*, Tensor>* captured);

}  // namespace ember::autograd
