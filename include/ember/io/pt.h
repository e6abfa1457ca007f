// ember/io/pt.h: PyTorch's own checkpoint files -- what torch.save writes and torch.load reads
// (state_dicts, pytorch_model.bin, training checkpoints with an optimizer), in the zip format
// (torch.save's default since 1.6) and the legacy one. A file holds a tree of values; load_pt
// returns it as a PtValue, save_pt writes one. Loading is safe by construction, as
// torch.load(weights_only=True): the pickle inside is read by a small machine that resolves only
// an allow-list of globals (tensor and storage rebuilding, torch.Size, OrderedDict) and runs
// nothing; anything else is an error naming the global.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/io/named_tensors.h"
#include "ember/tensor.h"

namespace ember::io {

// One value of a checkpoint's tree: None, bool, int, float, str, bytes, a tensor, or a list,
// tuple or dict of values (dict keys are str, int, ... in file order). A torch.Size reads as a
// tuple of ints; an nn.Parameter as a tensor with is_parameter() true. Copies share the tree.
class PtValue {
 public:
  enum class Kind { None, Bool, Int, Float, Str, Bytes, Tensor, List, Tuple, Dict };
  using Item = std::pair<PtValue, PtValue>;

  PtValue();  // None
  PtValue(bool value);
  PtValue(int value);
  PtValue(int64_t value);
  PtValue(double value);
  PtValue(const char* text);
  PtValue(std::string text);
  // A tensor; `parameter` makes it an nn.Parameter (its requires_grad is the tensor's).
  PtValue(Tensor tensor, bool parameter = false);

  static PtValue bytes(std::string data);
  static PtValue list(std::vector<PtValue> elements);
  static PtValue tuple(std::vector<PtValue> elements);
  // `ordered` makes it a collections.OrderedDict (what state_dict() returns in PyTorch).
  static PtValue dict(std::vector<Item> items, bool ordered = false);
  // An OrderedDict of name -> tensor, as module.state_dict() is in PyTorch.
  static PtValue state_dict(const NamedTensors& tensors);

  Kind kind() const;
  // "None", "bool", "int", "float", "str", "bytes", "Tensor", "list", "tuple", "dict".
  const char* kind_name() const;
  bool is_none() const { return kind() == Kind::None; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_dict() const { return kind() == Kind::Dict; }

  // The value as a C++ one; an ember::Error naming both kinds if it is another.
  bool to_bool() const;
  int64_t to_int() const;
  double to_double() const;           // a float, or an int converted
  const std::string& to_str() const;  // Str or Bytes
  const Tensor& to_tensor() const;
  bool is_parameter() const;                     // a Tensor loaded from / saved as an nn.Parameter
  const std::vector<PtValue>& elements() const;  // List or Tuple
  const std::vector<Item>& items() const;        // Dict, in order
  bool ordered() const;                          // Dict: an OrderedDict

  // Dict lookups: null (find) or an error naming the key and the keys there are (at).
  const PtValue* find(std::string_view key) const;
  const PtValue* find(int64_t key) const;
  const PtValue& at(std::string_view key) const;
  const PtValue& at(int64_t key) const;

  // A dict of str -> Tensor (a state_dict) as named tensors, in file order; an error naming the
  // first key or value that is not one.
  NamedTensors to_named_tensors() const;

  struct Node;

 private:
  explicit PtValue(std::shared_ptr<const Node> node);
  const Node& node() const;
  std::shared_ptr<const Node> node_;
};

// Reads a file torch.save wrote (zip or legacy format, pickle protocols 2 to 5). Tensors keep
// their sizes, strides and storage offsets; tensors that share a storage in the file share it in
// ember (a tied weight loads once). Storages are read from the file only when a tensor uses
// them, then placed on `device`. Dtypes ember lacks (complex, int8, int16, ...) are an error
// naming the tensor's dtype. Hostile files (a global off the allow-list, truncated archives or
// pickles, bad memo indices, storages smaller than their views, absurd sizes, deep nesting) give
// an ember::Error naming the file and the problem.
PtValue load_pt(const std::string& path, Device device = Device(kCPU));

// Writes `value` as torch.save(value, path) does -- the zip format (members <name>/data.pkl,
// byteorder, data/<key> per storage, version; stored, each at a 64-byte aligned offset) with a
// pickle of protocol 2 -- atomically: a failed write leaves no file, or the old one. Tensors on
// any device are copied to the host and load on the CPU; views and shared storages are kept:
// tensors whose ember::Storage is the same share one storage record (written whole), each with
// its own offset and strides, and the same Tensor twice is one object in PyTorch.
//
// What torch.load(path, weights_only=True) reads:
// - PyTorch 1.13 (Debian's): tensors of every ember dtype, Parameters, int, str, bool, None,
//   lists, tuples, dicts and OrderedDicts of these. Its weights-only unpickler has no opcode for
//   a Python float (BINFLOAT) or bytes (SHORT_BINBYTES/BINBYTES): a tree with a Float or Bytes
//   value anywhere (an optimizer's hyper-parameters, say) needs weights_only=False there.
// - PyTorch 2: all of the above, floats and bytes included.
// The pickle is the one torch.save writes for the same values, memo and all, except for bytes:
// protocol 2 would call _codecs.encode, which ember's reader refuses; the protocol-3 opcodes
// are used instead (every unpickler takes them in a protocol-2 stream).
// Errors (ember::Error naming the file and where in the tree): an undefined tensor, a str that
// is not UTF-8, a dict key Python cannot hash (list, dict) or a str/int key twice, one storage
// used by tensors of two dtypes, nesting deeper than ember's own reader accepts; a build without
// libzip (EMBER_MINIMAL_DEPS) throws.
void save_pt(const std::string& path, const PtValue& value);

// A PyTorch optimizer's state_dict() -- {"state": {id: {"step": ..., "exp_avg": ...}},
// "param_groups": [{"lr": ..., "betas": (...), ..., "params": [ids]}]} -- as ember's
// Optimizer::state_dict() names it ("state.<i>.<name>", "param_groups.<g>.<option>"), for
// optimizer.load_state_dict: a run of SGD, Adam or AdamW started in Python continues in ember.
// betas become beta1 and beta2, bools 1 and 0; PyTorch's execution switches (foreach, fused,
// capturable, differentiable) are dropped; every other option is passed on, so an optimizer of
// another kind refuses it by name. Errors name what is missing or malformed.
NamedTensors optimizer_state_from_pt(const PtValue& state);

}  // namespace ember::io
