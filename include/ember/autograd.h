// ember/autograd.h: reverse-mode automatic differentiation -- graph nodes, the backward engine,
// grad mode guards and finite-difference gradcheck. Tensor's requires_grad / backward / grad
// methods are the everyday interface; this header is for the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ember/tensor.h"

namespace ember::autograd {

class Node;

// Where a gradient flows next: input `input_nr` of node `fn`.
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
};

// Unregisters the hook it was returned for (PyTorch's RemovableHandle); removing twice, or after
// the tensor or graph is gone, does nothing.
class HookHandle {
 public:
  HookHandle() = default;
  explicit HookHandle(std::function<void()> remove) : remove_(std::move(remove)) {}
  void remove() {
    if (remove_) std::exchange(remove_, nullptr)();
  }

 private:
  std::function<void()> remove_;
};

// A hook on the gradient of a tensor: it may return a replacement (an undefined Tensor keeps the
// gradient as it is).
using GradHook = std::function<Tensor(const Tensor&)>;

// One recorded operation with num_outputs() outputs. apply() maps the gradients of its outputs
// (grads[i] for output i; an undefined Tensor means zero; apply may move from them) to one
// gradient per next edge (an undefined Tensor means zero).
class Node {
 public:
  explicit Node(std::vector<Edge> next_edges, uint32_t num_outputs = 1);
  Node(std::vector<Edge> next_edges, uint32_t num_outputs, uint64_t sequence_nr);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::vector<Tensor> apply(std::span<Tensor> grads) = 0;
  // "AddBackward0", as PyTorch names grad_fn.
  virtual std::string name() const = 0;
  // Frees what backward needed (saved tensors); called after a backward without retain_graph.
  virtual void release() {}
  // Runs the hooks of add_hook on the gradients arriving for this node's outputs; the engine calls
  // it before apply() (a leaf's accumulator runs the leaf's own hooks instead).
  void run_hooks(std::span<Tensor> grads) {
    if (!hooks_.empty()) run_hooks_slow(grads);
  }

  // The engine runs ready nodes latest-created first; a leaf's accumulator has the largest number
  // (as PyTorch's AccumulateGrad), so gradients are accumulated -- and their hooks run, as
  // DistributedDataParallel's -- as soon as they are complete, not when everything else is done.
  static constexpr uint64_t kAccumulateSequenceNr = UINT64_MAX;

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  uint32_t num_outputs() const { return num_outputs_; }
  uint64_t sequence_nr() const { return sequence_nr_; }
  // Non-leaf outputs of this node (output number, tensor) that keep their grad
  // (Tensor::retain_grad()).
  std::vector<std::pair<uint32_t, std::weak_ptr<TensorImpl>>>& retained_grads() {
    return retained_;
  }
  // A hook on the gradient of output `output_nr` (Tensor::register_hook on a non-leaf); returns
  // its id for remove_hook.
  uint64_t add_hook(uint32_t output_nr, GradHook hook);
  void remove_hook(uint64_t id);

  // Bookkeeping of the backward pass in progress, kept on the node so the engine allocates no
  // maps: which pass last reached it, how many gradients it still waits for, their sums (one per
  // output: `grad` for a single output, `grads` otherwise).
  struct PassState {
    uint64_t pass = 0;
    int pending = 0;
    Tensor grad;
    std::vector<Tensor> grads;
  };
  PassState& pass_state() { return pass_; }
  // Starts pass `pass`: nothing pending, no gradient yet.
  void reset_pass(uint64_t pass);
  // The gradients of the pass in progress, one per output.
  std::span<Tensor> pass_grads() {
    return num_outputs_ == 1 ? std::span<Tensor>(&pass_.grad, 1) : std::span<Tensor>(pass_.grads);
  }

 private:
  struct Hook {
    uint64_t id;
    uint32_t output_nr;
    GradHook fn;
  };
  std::vector<Edge> next_edges_;
  uint32_t num_outputs_;
  uint64_t sequence_nr_;
  std::vector<std::pair<uint32_t, std::weak_ptr<TensorImpl>>> retained_;
  std::vector<Hook> hooks_;
  PassState pass_;
  void run_hooks_slow(std::span<Tensor> grads);
};

// A fresh id for a hook.
uint64_t next_hook_id();

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

// The node that accumulates gradients into `leaf` (a tensor that requires grad and has no
// grad_fn), made on first use and kept alive by the graphs that reach it; what a graph walk from an
// output's grad_fn() meets for that leaf (DistributedDataParallel finds unused parameters so).
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);

// Variable._execution_engine.queue_callback: runs `callback` on this thread once the backward
// pass now running has processed every node -- after the last gradient is accumulated, before
// backward() returns (DistributedDataParallel waits for its all-reduces there). Only valid inside
// a backward pass (from a hook or a node); callbacks run in the order queued and may queue more.
// A pass that fails drops its callbacks.
void queue_callback(std::function<void()> callback);

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
