// ember/autograd.h: reverse-mode automatic differentiation -- graph nodes, the backward engine,
// grad mode guards and finite-difference gradcheck. Tensor's requires_grad / backward / grad
// methods are the everyday interface; this header is for the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember::autograd {

class Node;

// Where a gradient flows next: input `input_nr` of node `fn`.
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
};

// One recorded operation. apply() maps the gradient of its output to one gradient per next edge
// (an undefined Tensor means zero).
class Node {
 public:
  explicit Node(std::vector<Edge> next_edges);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::vector<Tensor> apply(const Tensor& grad_output) = 0;
  // "AddBackward0", as PyTorch names grad_fn.
  virtual std::string name() const = 0;
  // Frees what backward needed (saved tensors); called after a backward without retain_graph.
  virtual void release() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  uint64_t sequence_nr() const { return sequence_nr_; }
  // Non-leaf outputs of this node that keep their grad (Tensor::retain_grad()).
  std::vector<std::weak_ptr<TensorImpl>>& retained_grads() { return retained_; }

  // Bookkeeping of the backward pass in progress, kept on the node so the engine allocates no
  // maps: which pass last reached it, how many gradients it still waits for, their sum.
  struct PassState {
    uint64_t pass = 0;
    int pending = 0;
    Tensor grad;
  };
  PassState& pass_state() { return pass_; }

 private:
  std::vector<Edge> next_edges_;
  uint64_t sequence_nr_;
  std::vector<std::weak_ptr<TensorImpl>> retained_;
  PassState pass_;
};

// Whether ops record the graph (thread-local, on by default).
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Turns recording off for its scope (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard() : previous_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Turns recording on for its scope (torch.enable_grad()).
class EnableGradGuard {
 public:
  EnableGradGuard() : previous_(is_grad_enabled()) { set_grad_enabled(true); }
  ~EnableGradGuard() { set_grad_enabled(previous_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool previous_;
};

// Accumulates d(outputs)/d(leaf) into every leaf's grad(). grad_outputs may be empty for scalar
// outputs (implicitly ones).
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              bool retain_graph = false);

// torch.autograd.grad: the gradients of outputs with respect to inputs, returned instead of
// accumulated. An input that outputs do not depend on gives an error unless allow_unused.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool allow_unused = false);

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

// Compares backward's gradients of sum(f(inputs) * random weights) with central finite
// differences. Inputs should be float64 and require grad. Returns true, or throws an Error
// describing the first mismatch.
bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
               const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace ember::autograd

namespace ember {
using autograd::EnableGradGuard;
using autograd::NoGradGuard;
}  // namespace ember
