// autograd/engine.cpp: grad mode, graph nodes, leaf accumulation and the backward engine.
// Nodes run in reverse creation order once every consumer has sent its gradient, so each runs once.
#include <algorithm>
#include <atomic>
#include <queue>

#include "autograd/engine.h"
#include "autograd/function.h"
#include "core/host_allocator.h"
#include "core/make_tensor.h"
#include "ember/autocast.h"

namespace ember::autograd {

namespace {
thread_local bool grad_enabled = true;
std::atomic<uint64_t> next_sequence_nr{0};
}  // namespace

bool is_grad_enabled() {
  return grad_enabled;
}
void set_grad_enabled(bool enabled) {
  grad_enabled = enabled;
}

Node::Node(std::vector<Edge> next_edges, uint32_t num_outputs)
    : next_edges_(std::move(next_edges)),
      num_outputs_(num_outputs),
      sequence_nr_(next_sequence_nr++) {}

Node::Node(std::vector<Edge> next_edges, uint32_t num_outputs, uint64_t sequence_nr)
    : next_edges_(std::move(next_edges)), num_outputs_(num_outputs), sequence_nr_(sequence_nr) {}

void Node::reset_pass(uint64_t pass) {
  pass_.pass = pass;
  pass_.pending = 0;
  pass_.grad = Tensor();
  if (num_outputs_ != 1) {
    pass_.grads.resize(num_outputs_);
    for (Tensor& g : pass_.grads) g = Tensor();
  }
}

uint64_t next_hook_id() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

uint64_t Node::add_hook(uint32_t output_nr, GradHook hook) {
  uint64_t id = next_hook_id();
  hooks_.push_back(Hook{id, output_nr, std::move(hook)});
  return id;
}

void Node::remove_hook(uint64_t id) {
  std::erase_if(hooks_, [id](const Hook& h) { return h.id == id; });
}

namespace {

// grad = hook(grad) where the hook returns a defined tensor; hooks see only defined gradients.
void apply_hook(const GradHook& hook, Tensor& grad) {
  if (!grad.defined()) return;
  Tensor replaced = hook(grad);
  if (replaced.defined()) grad = std::move(replaced);
}

}  // namespace

void Node::run_hooks_slow(std::span<Tensor> grads) {
  // A copy: a hook may register or remove hooks.
  std::vector<Hook> hooks = hooks_;
  for (const Hook& h : hooks) apply_hook(h.fn, grads[h.output_nr]);
}

void AccumulateGrad::run_leaf_hooks(std::span<Tensor> grads) {
  auto impl = leaf_.lock();
  if (!impl || !impl->autograd || impl->autograd->hooks.empty()) return;
  auto hooks = impl->autograd->hooks;
  for (const auto& [id, fn] : hooks) apply_hook(fn, grads[0]);
}

AutogradMeta& meta_of(const Tensor& t) {
  auto& m = t.impl().autograd;
  if (!m) m = make_cached_shared<AutogradMeta>();
  return *m;
}

std::vector<Tensor> AccumulateGrad::apply(std::span<Tensor> grads) {
  const Tensor& grad = grads[0];
  auto impl = leaf_.lock();
  if (!impl || !grad.defined()) return {};
  Tensor leaf(impl);
  AutogradMeta& m = meta_of(leaf);
  Tensor g = grad.to(leaf.device(), leaf.dtype());
  if (!m.grad.defined()) {
    // Take the incoming buffer when nothing else refers to it; copy otherwise.
    // `grad` is the engine's own reference; to() hands back that same tensor when nothing changes.
    long owners = g.impl_ptr() == grad.impl_ptr() ? 2 : 1;
    bool sole =
        g.impl_ptr().use_count() == owners && g.storage().use_count() == 1 && g.is_contiguous();
    m.grad = sole ? g : g.clone();
  } else {
    m.grad.add_(g);
  }
  if (!m.post_accumulate_hooks.empty()) {
    auto hooks = m.post_accumulate_hooks;
    for (const auto& [id, fn] : hooks) fn(leaf);
  }
  return {};
}

namespace {

struct LaterFirst {
  bool operator()(const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

}  // namespace

namespace {

// The callbacks of the backward passes running on this thread, innermost last (a hook may run a
// backward of its own).
thread_local std::vector<std::vector<std::function<void()>>*> pass_callbacks;

// Registers a pass's callback list for its lifetime.
class CallbackScope {
 public:
  CallbackScope() { pass_callbacks.push_back(&callbacks_); }
  ~CallbackScope() { pass_callbacks.pop_back(); }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;
  // Runs the callbacks in order, including those they queue.
  void run() {
    for (size_t i = 0; i < callbacks_.size(); ++i) {
      auto callback = std::move(callbacks_[i]);
      callback();
    }
    callbacks_.clear();
  }

 private:
  std::vector<std::function<void()>> callbacks_;
};

}  // namespace

void queue_callback(std::function<void()> callback) {
  EMBER_CHECK(!pass_callbacks.empty(),
              "[queue_callback] final callbacks can only be queued during a backward pass (from "
              "a hook or a node); call it from a tensor hook");
  EMBER_CHECK(callback != nullptr, "[queue_callback] the callback is empty");
  pass_callbacks.back()->push_back(std::move(callback));
}

void run_backward(const std::vector<Edge>& roots, const std::vector<Tensor>& root_grads,
                  bool retain_graph, bool accumulate, std::vector<Capture>* captured) {
  static std::atomic<uint64_t> passes{0};
  const uint64_t pass = ++passes;
  CallbackScope callbacks;
  NoGradGuard no_grad;
  // Gradients take the dtypes the forward pass chose: no autocast in backward.
  autocast_detail::Suspend no_autocast;
  // Count, for every node reachable from the roots, how many gradients it waits for.
  auto reach = [pass](Node* n) {
    if (n->pass_state().pass == pass) return false;
    n->reset_pass(pass);
    return true;
  };
  std::vector<Node*> stack;
  for (const Edge& e : roots)
    if (e.fn && reach(e.fn.get())) stack.push_back(e.fn.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (!e.fn) continue;
      if (reach(e.fn.get())) stack.push_back(e.fn.get());
      ++e.fn->pass_state().pending;
    }
  }

  auto send = [](const Edge& e, const Tensor& g) {
    if (!g.defined()) return;
    Tensor& b = e.fn->pass_grads()[e.input_nr];
    b = b.defined() ? b.add(g) : g;
  };
  std::priority_queue<std::shared_ptr<Node>, std::vector<std::shared_ptr<Node>>, LaterFirst> ready;
  for (size_t i = 0; i < roots.size(); ++i)
    if (roots[i].fn) send(roots[i], root_grads[i]);
  for (const Edge& e : roots) {
    if (!e.fn) continue;
    Node::PassState& st = e.fn->pass_state();
    if (st.pending == 0) {
      st.pending = -1;  // queued once even when it is several roots
      ready.push(e.fn);
    }
  }

  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.top();
    ready.pop();
    std::span<Tensor> grads_in = node->pass_grads();
    auto* leaf_node = dynamic_cast<AccumulateGrad*>(node.get());
    if (leaf_node)
      leaf_node->run_leaf_hooks(grads_in);
    else
      node->run_hooks(grads_in);
    for (const auto& [nr, weak] : node->retained_grads()) {
      if (auto impl = weak.lock(); impl && grads_in[nr].defined())
        meta_of(Tensor(impl)).grad = grads_in[nr].clone();
    }
    if (captured) {
      for (Capture& c : *captured)
        if (c.fn == node.get()) c.grad = grads_in[c.input_nr];
    }
    bool any =
        std::any_of(grads_in.begin(), grads_in.end(), [](const Tensor& g) { return g.defined(); });
    std::vector<Tensor> grads;
    if (any && !(leaf_node && !accumulate)) grads = node->apply(grads_in);
    for (Tensor& g : grads_in) g = Tensor();
    if (!retain_graph) node->release();
    const auto& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      Node* next = edges[i].fn.get();
      if (!next) continue;
      if (i < grads.size()) send(edges[i], grads[i]);
      if (--next->pass_state().pending == 0) ready.push(edges[i].fn);
    }
  }
  callbacks.run();
}

namespace {

// The (edge, gradient) pairs to start from, with PyTorch's checks.
void collect_roots(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
                   std::vector<Edge>& roots, std::vector<Tensor>& grads) {
  EMBER_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "[backward] got ",
              grad_outputs.size(), " gradients for ", outputs.size(), " outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    Edge e = gradient_edge(out);
    EMBER_CHECK(e.fn != nullptr, "[backward] element ", i,
                " of tensors does not require grad and does not have a grad_fn; set "
                "requires_grad on the inputs (ember::tensor(..., {.requires_grad = true}) or "
                "t.requires_grad_()) before computing it");
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!g.defined()) {
      EMBER_CHECK(out.numel() == 1,
                  "[backward] grad can be implicitly created only for scalar "
                  "outputs; this output has shape ",
                  shape_str(out.sizes()),
                  ". Pass a gradient of the same shape, or reduce it (e.g. .sum()) first.");
      g = make_tensor(out.sizes(), out.dtype(), out.device());
      g.fill_(1);
    } else {
      EMBER_CHECK_KIND(Shape, g.sizes() == out.sizes(),
                       "[backward] Mismatch in shape: grad_output[", i, "] has a shape of ",
                       shape_str(g.sizes()), " and output[", i, "] has a shape of ",
                       shape_str(out.sizes()));
    }
    roots.push_back(e);
    grads.push_back(g);
  }
}

}  // namespace

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              bool retain_graph) {
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  collect_roots(outputs, grad_outputs, roots, grads);
  run_backward(roots, grads, retain_graph, true, nullptr);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph,
                         bool allow_unused) {
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  collect_roots(outputs, grad_outputs, roots, grads);
  // input_edges keeps the inputs' nodes (leaf accumulators among them) alive during the pass.
  std::vector<Edge> input_edges;
  std::vector<Capture> captured;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(inputs[i].requires_grad(), "[autograd::grad] input ", i,
                " does not require grad; call requires_grad_() on it first");
    input_edges.push_back(gradient_edge(inputs[i]));
    captured.push_back(Capture{input_edges.back().fn.get(), input_edges.back().input_nr, Tensor()});
  }
  run_backward(roots, grads, retain_graph, false, &captured);
  std::vector<Tensor> result;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor g = captured[i].grad;
    EMBER_CHECK(g.defined() || allow_unused,
                "[autograd::grad] One of the differentiated Tensors "
                "(input ",
                i,
                ") appears to not have been used in the graph. Set allow_unused=true "
                "if this is the desired behavior.");
    result.push_back(g);
  }
  return result;
}

}  // namespace ember::autograd
