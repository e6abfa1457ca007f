// nn/module.cpp: Module's registries, traversal, device moves, state dicts, cloning and printing.
#include "ember/nn/module.h"

#include <ostream>
#include <typeindex>
#include <unordered_map>
#include <unordered_set>

#include "ember/ops.h"

namespace ember::nn {

Tensor Module::forward(const Tensor&) {
  EMBER_THROW(NotImplemented, "[", name_,
              "] has no forward(Tensor); call the module's own "
              "forward(...) with its arguments");
}

Tensor CloneMap::tensor(const Tensor& t) {
  auto it = tensors_.find(&t.impl());
  if (it != tensors_.end()) return it->second;
  NoGradGuard no_grad;
  Tensor copy = t.detach().clone();
  if (t.requires_grad()) copy.requires_grad_();
  tensors_.emplace(&t.impl(), copy);
  return copy;
}

std::shared_ptr<Module> CloneMap::module(const Module& m) {
  auto it = modules_.find(&m);
  if (it != modules_.end()) return it->second;
  std::shared_ptr<Module> copy = m.clone_impl(*this);
  modules_.emplace(&m, copy);
  return copy;
}

namespace detail {

namespace {
std::unordered_map<std::type_index, CopyCloner>& copy_cloners() {
  static std::unordered_map<std::type_index, CopyCloner> cloners;
  return cloners;
}
}  // namespace

bool register_copy_cloner(const std::type_info& type, CopyCloner cloner) {
  copy_cloners().emplace(std::type_index(type), cloner);
  return true;
}

}  // namespace detail

std::shared_ptr<Module> Module::clone() const {
  CloneMap map;
  return map.module(*this);
}

std::shared_ptr<Module> Module::clone_impl(CloneMap&) const {
  auto& cloners = detail::copy_cloners();
  auto it = cloners.find(std::type_index(typeid(*this)));
  EMBER_CHECK_KIND(
      NotImplemented,
      parameters_.empty() && buffers_.empty() && children_.empty() && it != cloners.end(),
      "[clone] ", name_, " cannot be cloned: it does not implement clone_impl(); add EMBER_CLONE(",
      name_, "Impl, &", name_,
      "Impl::member, ...) to its class, listing its member tensors and sub-modules");
  return it->second(*this);
}

void Module::check_clone_type(const Module& original, const std::type_info& impl) {
  EMBER_CHECK_KIND(NotImplemented, typeid(original) == impl, "[clone] ", original.name_,
                   " derives from a module that can be cloned but has no clone_impl() of its "
                   "own; add EMBER_CLONE(...) to its class");
}

void Module::adopt_registered(const Module& original, CloneMap& map) {
  parameters_.clear();
  buffers_.clear();
  children_.clear();
  for (const auto& [name, t] : original.parameters_)
    parameters_.emplace_back(name, t.defined() ? map.tensor(t) : t);
  for (const auto& [name, t] : original.buffers_)
    buffers_.emplace_back(name, t.defined() ? map.tensor(t) : t);
  for (const auto& [name, child] : original.children_)
    children_.emplace_back(name, map.module(*child));
}

Tensor Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  EMBER_CHECK(name.find('.') == std::string::npos && !name.empty(), "[", name_,
              "] parameter name can't be empty or contain \".\", got \"", name, "\"");
  if (tensor.defined() && requires_grad) tensor.requires_grad_();
  parameters_.emplace_back(std::move(name), tensor);
  return tensor;
}

Tensor Module::register_buffer(std::string name, Tensor tensor) {
  EMBER_CHECK(name.find('.') == std::string::npos && !name.empty(), "[", name_,
              "] buffer name can't be empty or contain \".\", got \"", name, "\"");
  buffers_.emplace_back(std::move(name), tensor);
  return tensor;
}

void Module::remove_parameter(const std::string& name) {
  std::erase_if(parameters_, [&name](const auto& entry) { return entry.first == name; });
}

void Module::collect(const std::string& prefix, bool params, bool recurse, StateDict& out) const {
  for (const auto& [name, t] : params ? parameters_ : buffers_)
    if (t.defined()) out.emplace_back(prefix + name, t);
  if (!recurse) return;
  for (const auto& [name, child] : children_)
    child->collect(prefix + name + ".", params, true, out);
}

StateDict Module::named_parameters(bool recurse) const {
  StateDict out;
  collect("", true, recurse, out);
  // A tensor shared by two modules is listed once, under its first name (as PyTorch does).
  std::unordered_set<const TensorImpl*> seen;
  StateDict unique;
  for (auto& [name, t] : out)
    if (seen.insert(&t.impl()).second) unique.emplace_back(std::move(name), t);
  return unique;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

StateDict Module::named_buffers(bool recurse) const {
  StateDict out;
  collect("", false, recurse, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_buffers(recurse)) out.push_back(t);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [name, child] : children_) out.push_back(child);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const {
  return children_;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  std::vector<std::shared_ptr<Module>> out;
  if (include_self) {
    std::shared_ptr<Module> self = weak_from_this().lock();
    EMBER_CHECK(self != nullptr, "[", name_,
                "] modules() includes the module itself, which needs "
                "it owned by a shared_ptr (a holder such as nn::Linear, or std::make_shared); "
                "call modules(/*include_self=*/false) otherwise");
    out.push_back(std::move(self));
  }
  for (const auto& [name, child] : children_) {
    out.push_back(child);
    for (auto& m : child->modules(false)) out.push_back(m);
  }
  return out;
}

Module& Module::to(Device device, DType dtype, bool non_blocking) {
  NoGradGuard no_grad;
  auto move = [&](const Tensor& t, bool convert) {
    DType target = convert && t.is_floating_point() ? dtype : t.dtype();
    t.set_data(t.to(device, target, non_blocking));
    if (t.grad().defined()) t.grad().set_data(t.grad().to(device, target, non_blocking));
  };
  for (auto& [name, t] : named_parameters()) move(t, true);
  for (auto& [name, t] : named_buffers()) move(t, true);
  return *this;
}

Module& Module::to(Device device, bool non_blocking) {
  NoGradGuard no_grad;
  for (auto& [name, t] : named_parameters()) {
    t.set_data(t.to(device, non_blocking));
    if (t.grad().defined()) t.grad().set_data(t.grad().to(device, non_blocking));
  }
  for (auto& [name, t] : named_buffers()) t.set_data(t.to(device, non_blocking));
  return *this;
}

Module& Module::to(DType dtype) {
  NoGradGuard no_grad;
  for (auto& [name, t] : named_parameters()) {
    if (!t.is_floating_point()) continue;
    t.set_data(t.to(dtype));
    if (t.grad().defined()) t.grad().set_data(t.grad().to(dtype));
  }
  for (auto& [name, t] : named_buffers())
    if (t.is_floating_point()) t.set_data(t.to(dtype));
  return *this;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (auto& t : parameters()) {
    if (!t.grad().defined()) continue;
    if (set_to_none) {
      t.mutable_grad() = Tensor();
    } else {
      NoGradGuard no_grad;
      t.mutable_grad().zero_();
    }
  }
}

StateDict Module::state_dict() const {
  // As PyTorch's state_dict(): a module's parameters, its buffers, then each child's entries;
  // values detached (keep_vars=False), so they can be changed in place like any data.
  StateDict out;
  auto visit = [&out](auto& self, const Module& m, const std::string& prefix) -> void {
    for (const StateDict* list : {&m.parameters_, &m.buffers_})
      for (const auto& [name, t] : *list)
        if (t.defined()) out.emplace_back(prefix + name, t.detach());
    for (const auto& [name, child] : m.children_) self(self, *child, prefix + name + ".");
  };
  visit(visit, *this, "");
  return out;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  std::unordered_map<std::string, const Tensor*> given;
  for (const auto& [name, t] : state) given[name] = &t;
  std::vector<std::string> missing, unexpected;
  StateDict mine = state_dict();
  std::unordered_set<std::string> known;
  NoGradGuard no_grad;
  for (auto& [name, t] : mine) {
    known.insert(name);
    auto it = given.find(name);
    if (it == given.end()) {
      missing.push_back(name);
      continue;
    }
    const Tensor& src = *it->second;
    EMBER_CHECK_KIND(Shape, src.sizes() == t.sizes(), "[load_state_dict] size mismatch for ", name,
                     ": copying a param with shape ", shape_str(src.sizes()),
                     " from checkpoint, the shape in current model is ", shape_str(t.sizes()), ".");
  }
  for (const auto& [name, t] : state)
    if (!known.count(name)) unexpected.push_back(name);
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::string msg = "[load_state_dict] Error(s) in loading state_dict for " + name_ + ":";
    auto list = [&](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      msg += std::string(" ") + what + " key(s) in state_dict: ";
      for (size_t i = 0; i < keys.size(); ++i)
        msg.append(i ? ", \"" : "\"").append(keys[i]).append("\"");
      msg += ".";
    };
    list("Missing", missing);
    list("Unexpected", unexpected);
    EMBER_THROW(Value, msg);
  }
  for (auto& [name, t] : mine)  // (a tensor given as itself needs no copy)
    if (auto it = given.find(name); it != given.end() && &it->second->impl() != &t.impl())
      t.copy_(*it->second);
}

std::string Module::str(int indent) const {
  std::string out = name_ + "(";
  std::string extra = extra_repr();
  if (children_.empty()) return out + extra + ")";
  std::string pad(indent + 2, ' ');
  out += "\n";
  if (!extra.empty()) out += pad + extra + "\n";
  for (const auto& [name, child] : children_)
    out += pad + "(" + name + "): " + child->str(indent + 2) + "\n";
  return out + std::string(indent, ' ') + ")";
}

std::string Module::str() const {
  return str(0);
}

std::ostream& operator<<(std::ostream& os, const Module& module) {
  return os << module.str();
}

}  // namespace ember::nn
