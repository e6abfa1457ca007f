// ember/nn/module.h: Module -- parameters, buffers and sub-modules with PyTorch's dotted names,
// moving between devices, train/eval, state dicts and printing -- and ModuleHolder, the handle
// type that makes `nn::Linear model(10, 1); model->to(device); model(x)` read like PyTorch.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/tensor.h"

namespace ember::nn {

// Named tensors in registration order, as module.state_dict() returns them.
using StateDict = std::vector<std::pair<std::string, Tensor>>;

class Module;

// What clone() has copied so far, so that a tensor or module shared by two owners (tied
// weights) is copied once and stays shared in the copy.
class CloneMap {
 public:
  // t's copy (detached, same device, dtype and requires_grad), made on first request.
  Tensor tensor(const Tensor& t);
  // m's clone, made on first request.
  std::shared_ptr<Module> module(const Module& m);

 private:
  std::unordered_map<const TensorImpl*, Tensor> tensors_;
  std::unordered_map<const Module*, std::shared_ptr<Module>> modules_;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string name = "Module") : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module& operator=(const Module&) = delete;

  // The layer's computation for modules that map one tensor to one tensor (all built-in layers);
  // Sequential calls it. Modules with other signatures define their own forward.
  virtual Tensor forward(const Tensor& input);

  std::vector<Tensor> parameters(bool recurse = true) const;
  StateDict named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  StateDict named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // This module (unless include_self is false) and every descendant, depth first, as PyTorch's
  // modules(). Including itself needs the module owned by a shared_ptr (as holders make them).
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);

  // Moves (or converts) every parameter, gradient and buffer in place: tensors handed out
  // before (to an optimizer, say) see the change.
  Module& to(Device device, bool non_blocking = false);
  Module& to(DType dtype);
  Module& to(Device device, DType dtype, bool non_blocking = false);

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Clears gradients: to undefined (PyTorch 2's default) or to zeros.
  void zero_grad(bool set_to_none = true);

  // Dotted names ("0.weight") in PyTorch's order -- each module's parameters, then its buffers,
  // then its children's entries -- with detached values sharing the parameters' storage.
  StateDict state_dict() const;
  // Copies values in; strict rejects missing and unexpected keys. Shapes must match.
  void load_state_dict(const StateDict& state, bool strict = true);

  // A deep copy (LibTorch's Cloneable::clone): the same type and options with its own
  // parameters, buffers and sub-modules, their values copied (same devices, dtypes and
  // requires_grad), tensors shared inside the module shared in the copy. DataParallel replicates
  // modules with it. Built-in layers have it; a module of your own that holds parameters,
  // buffers or sub-modules provides it with EMBER_CLONE(YourImpl, &YourImpl::member, ...) in its
  // class, listing every member tensor and sub-module pointer (ModuleHolder members included).
  std::shared_ptr<Module> clone() const;

  const std::string& name() const { return name_; }
  // What goes between the parentheses when printed: "in_features=10, out_features=1, bias=True".
  virtual std::string extra_repr() const { return ""; }
  // The module tree as PyTorch prints it.
  std::string str() const;

 protected:
  // For clone(): a module with this one's name and training flag and nothing registered yet
  // (copies of subclasses copy their options; adopt() then gives them their own tensors).
  Module(const Module& other)
      : std::enable_shared_from_this<Module>(), name_(other.name_), training_(other.training_) {}
  // Makes the clone of this module (see EMBER_CLONE). The default copies modules with nothing
  // registered (layers such as ReLU, whose copy constructor copies their options) and refuses
  // the others, naming them.
  virtual std::shared_ptr<Module> clone_impl(CloneMap& map) const;
  // For clone_impl(): this copy of `original` takes copies (from map) of its member tensors and
  // sub-modules, then registers the copies of every parameter, buffer and child of `original`.
  template <class Impl, class... MemberPointers>
  static std::shared_ptr<Module> clone_as(const Impl& original, CloneMap& map,
                                          MemberPointers... members) {
    check_clone_type(original, typeid(Impl));
    auto copy = std::make_shared<Impl>(original);
    (adopt_member(map, (*copy).*members), ...);
    copy->adopt_registered(original, map);
    return copy;
  }
  // Registers and returns a parameter (requires_grad set on it).
  Tensor register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor register_buffer(std::string name, Tensor tensor);
  // Drops a registered parameter (PyTorch's `del module.weight`); nothing when there is none.
  void remove_parameter(const std::string& name);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    children_.emplace_back(std::move(name), module);
    return module;
  }

 private:
  friend class CloneMap;
  static void adopt_member(CloneMap& map, Tensor& t) {
    if (t.defined()) t = map.tensor(t);
  }
  template <class M>
  static void adopt_member(CloneMap& map, std::shared_ptr<M>& m) {
    if (m) m = std::dynamic_pointer_cast<M>(map.module(*m));
  }
  template <class Holder>
  requires requires(Holder h) { h.ptr(); }
  static void adopt_member(CloneMap& map, Holder& h) {
    if (h.ptr()) h = Holder(std::dynamic_pointer_cast<typename Holder::ImplType>(map.module(*h)));
  }
  template <class T>
  static void adopt_member(CloneMap& map, std::optional<T>& m) {
    if (m) adopt_member(map, *m);
  }
  template <class T>
  static void adopt_member(CloneMap& map, std::vector<T>& v) {
    for (T& e : v) adopt_member(map, e);
  }
  // A struct of tensors or modules names them with `auto members() { return std::tie(...); }`.
  template <class S>
  requires requires(S s) { s.members(); }
  static void adopt_member(CloneMap& map, S& s) {
    std::apply([&map](auto&... m) { (adopt_member(map, m), ...); }, s.members());
  }
  void adopt_registered(const Module& original, CloneMap& map);
  // Refuses to clone a subclass of `impl` that has no clone_impl of its own (it would be sliced).
  static void check_clone_type(const Module& original, const std::type_info& impl);
  void collect(const std::string& prefix, bool params, bool recurse, StateDict& out) const;
  std::string str(int indent) const;

  std::string name_;
  StateDict parameters_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

std::ostream& operator<<(std::ostream& os, const Module& module);

namespace detail {
using CopyCloner = std::shared_ptr<Module> (*)(const Module&);
// Records Impl's copy constructor for Module's default clone_impl (EMBER_MODULE does it).
bool register_copy_cloner(const std::type_info& type, CopyCloner cloner);
template <class Impl>
bool register_copyable() {
  if constexpr (std::is_copy_constructible_v<Impl> && !std::is_abstract_v<Impl>) {
    return register_copy_cloner(typeid(Impl), [](const Module& m) -> std::shared_ptr<Module> {
      return std::make_shared<Impl>(static_cast<const Impl&>(m));
    });
  }
  return false;
}
}  // namespace detail

// A shared handle to a module implementation: `->` reaches the module, `()` calls forward.
template <class Impl>
class ModuleHolder {
 public:
  using ImplType = Impl;

  template <class... Args>
  requires(!(sizeof...(Args) == 1 && (std::is_base_of_v<ModuleHolder, std::remove_cvref_t<Args>> &&
                                      ...))) explicit ModuleHolder(Args&&... args)
      : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT

  Impl* operator->() const { return impl_.get(); }
  Impl& operator*() const { return *impl_; }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  operator std::shared_ptr<Module>() const { return impl_; }  // NOLINT

  template <class... Args>
  auto operator()(Args&&... args) const {
    return impl_->forward(std::forward<Args>(args)...);
  }

 protected:
  std::shared_ptr<Impl> impl_;
};

template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& m) {
  return os << *m;
}

}  // namespace ember::nn

// Inside a module class: its clone_impl, copying the module and giving the copy its own copies of
// the listed members (Tensor, std::shared_ptr<SomeImpl> or holder members, std::optional and
// std::vector of those, structs with a members() returning std::tie of theirs; as pointers to
// members: EMBER_CLONE(MyNetImpl, &MyNetImpl::weight, &MyNetImpl::encoder)); every parameter,
// buffer and child must be reachable so, or be registered only (as Sequential's children).
#define EMBER_CLONE(Impl, ...)                                                                 \
 protected:                                                                                    \
  std::shared_ptr<::ember::nn::Module> clone_impl(::ember::nn::CloneMap& map) const override { \
    return clone_as<Impl>(*this, map __VA_OPT__(, ) __VA_ARGS__);                              \
  }                                                                                            \
                                                                                               \
 public:

// Declares `Name` as the holder of `Name##Impl`, with a chainable to():
//   auto model = nn::Linear(10, 1).to(device);
#define EMBER_MODULE(Name) EMBER_MODULE_WITH(Name, )

// As EMBER_MODULE, with extra holder members: constructors spelling out Impl's parameters, so
// that braced arguments reach it (`nn::Conv2d(1, 8, {3, 5}, {.stride = 2})`), which the
// forwarding constructor cannot deduce.
#define EMBER_MODULE_WITH(Name, ...)      \
  EMBER_MODULE_HOLDER(Name, __VA_ARGS__); \
  inline const bool ember_copy_cloner_##Name = ::ember::nn::detail::register_copyable<Name##Impl>()

// ember's own modules (the headers of include/ember/nn): as EMBER_MODULE(_WITH), but Impl's copy
// cloner is compiled once, in the library (src/nn/builtin_modules.cpp defines
// EMBER_DEFINE_BUILTIN_MODULES and includes these headers), and each file that includes ember.h
// only calls it. Compiled in every such file, the registrations of the ~110 built-in modules
// (make_shared, copy constructors, vtables) were most of the time that including ember.h took.
#define EMBER_BUILTIN_MODULE(Name) EMBER_BUILTIN_MODULE_WITH(Name, )
#ifdef EMBER_DEFINE_BUILTIN_MODULES
#define EMBER_BUILTIN_MODULE_WITH(Name, ...)                     \
  EMBER_MODULE_HOLDER(Name, __VA_ARGS__);                        \
  bool ember_register_copy_cloner_##Name() {                     \
    return ::ember::nn::detail::register_copyable<Name##Impl>(); \
  }                                                              \
  inline const bool ember_copy_cloner_##Name = ember_register_copy_cloner_##Name()
#else
#define EMBER_BUILTIN_MODULE_WITH(Name, ...) \
  EMBER_MODULE_HOLDER(Name, __VA_ARGS__);    \
  bool ember_register_copy_cloner_##Name();  \
  inline const bool ember_copy_cloner_##Name = ember_register_copy_cloner_##Name()
#endif

// The holder class of EMBER_MODULE_WITH.
#define EMBER_MODULE_HOLDER(Name, ...)                                 \
  class Name : public ::ember::nn::ModuleHolder<Name##Impl> {          \
   public:                                                             \
    using ::ember::nn::ModuleHolder<Name##Impl>::ModuleHolder;         \
    __VA_ARGS__                                                        \
    Name to(::ember::Device device, bool non_blocking = false) const { \
      impl_->to(device, non_blocking);                                 \
      return *this;                                                    \
    }                                                                  \
    Name to(::ember::DType dtype) const {                              \
      impl_->to(dtype);                                                \
      return *this;                                                    \
    }                                                                  \
  }
