// autograd/function.cpp: recording ops into the graph -- saved tensors with version checks,
// in-place ops (including on views, by rewriting the base's history), and un-broadcasting.
#include "autograd/function.h"
#include "core/host_allocator.h"

#include "autograd/engine.h"
#include "core/make_tensor.h"
#include "core/shape.h"

namespace ember::autograd {

SavedTensor::SavedTensor(const Tensor& t, bool is_output)
    : data_(is_output ? t.detach() : t), version_(t.storage()->version()) {}

Tensor SavedTensor::unpack() const {
  if (!data_.defined()) return data_;
  uint64_t now = data_.storage()->version();
  EMBER_CHECK(now == version_,
              "[autograd] one of the variables needed for gradient computation "
              "has been modified by an inplace operation: [",
              data_.dtype(), " ", shape_str(data_.sizes()), "] is at version ", now,
              "; expected version ", version_,
              " instead. Hint: clone() the tensor before changing it in place, or change it "
              "after backward.");
  return data_;
}

void throw_freed(const char* name) {
  EMBER_THROW(Value, "[", name,
              "] Trying to backward through the graph a second time (or "
              "directly access saved tensors after they have already been freed). Saved "
              "intermediate values of the graph are freed when you call backward() or "
              "autograd::grad(). Specify retain_graph=true if you need to backward through the "
              "graph a second time.");
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return {};
  AutogradMeta* m = meta_if(t);
  if (!m) return {};
  if (m->grad_fn) return Edge{m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    m->grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (!grad.defined() || grad.sizes() == shape) return grad;
  int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  Shape dims;
  for (int64_t d = 0; d < grad.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && grad.size(d) != 1)) dims.push_back(d);
  Tensor r = dims.empty() ? grad : grad.sum(dims, true);
  return r.view(shape);
}

std::vector<Edge> collect_edges(const Tensor* first, std::initializer_list<const Tensor*> rest) {
  std::vector<Edge> edges;
  edges.reserve(rest.size() + (first ? 1 : 0));
  if (first) edges.push_back(gradient_edge(*first));
  for (const Tensor* t : rest) edges.push_back(gradient_edge(*t));
  return edges;
}

namespace {

void set_history(const Tensor& out, std::shared_ptr<Node> node, uint32_t output_nr = 0) {
  AutogradMeta& m = meta_of(out);
  m.requires_grad = true;
  m.grad_fn = std::move(node);
  m.output_nr = output_nr;
}

// The base's history after an in-place op on one of its views: the gradient for the base is the
// incoming one with the view's region replaced by what the op's backward says.
class CopySlices : public Node {
 public:
  CopySlices(std::vector<Edge> edges, Shape sizes, Shape strides, int64_t offset, BackwardFn fn)
      : Node(std::move(edges)),
        sizes_(std::move(sizes)),
        strides_(std::move(strides)),
        offset_(offset),
        fn_(std::move(fn)) {}
  std::vector<Tensor> apply(std::span<Tensor> grads_in) override {
    const Tensor& grad = grads_in[0];
    EMBER_CHECK(fn_ != nullptr,
                "[CopySlices] Trying to backward through the graph a second time; "
                "specify retain_graph=true");
    Tensor result = grad.contiguous().clone();
    Tensor region = make_view(result, sizes_, strides_, offset_);
    std::vector<Tensor> grads = fn_(region.clone());
    if (grads[0].defined())
      region.copy_(grads[0]);
    else
      region.fill_(0);
    grads[0] = result;
    return grads;
  }
  std::string name() const override { return "CopySlices"; }
  void release() override { fn_ = nullptr; }

 private:
  Shape sizes_, strides_;
  int64_t offset_;
  BackwardFn fn_;
};

}  // namespace

void attach(const Tensor& out, std::shared_ptr<Node> node, uint32_t output_nr) {
  // An op's output may share storage with a tensor outside the graph (a reduction viewing its
  // result to drop dims). Its history starts here, so for autograd it is no view of that tensor:
  // in-place changes to it, or to views of it, must rewrite its own history, not the other's.
  std::shared_ptr<TensorImpl>& base = out.impl().view_base;
  if (base && !(base->autograd && base->autograd->requires_grad)) base = nullptr;
  set_history(out, std::move(node), output_nr);
}

void check_inplace(const char* name, const Tensor& self) {
  if (!is_grad_enabled()) return;
  AutogradMeta* m = meta_if(self);
  EMBER_CHECK(!(m && m->multi_output_view && m->grad_fn), "[", name, "] Output ",
              m ? m->output_nr : 0, " of ", m && m->grad_fn ? m->grad_fn->name() : std::string(),
              " is a view and is being modified inplace. This view is the output of a function "
              "that returns multiple views. Such functions do not allow the output views to be "
              "modified inplace. You should replace the inplace operation by an out-of-place one "
              "(or clone() the view first).");
  EMBER_CHECK(!(m && m->requires_grad && !m->grad_fn), "[", name,
              "] a leaf Variable that requires "
              "grad is being used in an in-place operation. Change it under ember::NoGradGuard, "
              "or clone() it first.");
  if (const auto& base_impl = self.impl().view_base) {
    AutogradMeta* bm = base_impl->autograd.get();
    EMBER_CHECK(!(bm && bm->requires_grad && !bm->grad_fn), "[", name,
                "] a view of a leaf "
                "Variable that requires grad is being used in an in-place operation. Change it "
                "under ember::NoGradGuard, or clone() the leaf first.");
  }
}

void record_inplace(const char* name, const Tensor& self,
                    std::initializer_list<const Tensor*> others, BackwardFn fn) {
  bool any = needs_grad(others) || needs_grad({&self});
  if (!any) return;
  EMBER_CHECK(self.is_floating_point(), "[", name,
              "] only floating point tensors can require "
              "gradients, got ",
              self.dtype());
  check_inplace(name, self);
  const std::shared_ptr<TensorImpl>& base_impl = self.impl().view_base;
  if (!base_impl || !Tensor(base_impl).is_contiguous()) {
    set_history(self, make_cached_shared<LambdaNode<BackwardFn>>(name, collect_edges(&self, others),
                                                                 std::move(fn)));
    return;
  }
  Tensor base(base_impl);
  std::vector<Edge> edges = collect_edges(&base, others);
  int64_t offset = self.storage_offset() - base.storage_offset();
  auto node = std::make_shared<CopySlices>(std::move(edges), self.sizes(), self.strides(), offset,
                                           std::move(fn));
  set_history(base, node);
  // The view now reads the base's new history.
  Shape base_sizes = base.sizes(), sizes = self.sizes(), strides = self.strides();
  set_history(self, make_cached_shared<LambdaNode<BackwardFn>>(
                        "AsStridedBackward0", std::vector<Edge>{Edge{node, 0}},
                        [base_sizes, sizes, strides, offset, dev = base.device(),
                         dtype = base.dtype()](const Tensor& g) -> std::vector<Tensor> {
                          Tensor r = make_tensor(base_sizes, dtype, dev);
                          r.zero_();
                          make_view(r, sizes, strides, offset).copy_(g);
                          return {r};
                        }));
}

}  // namespace ember::autograd
