// io/pickle.h: a safe pickle reader (protocols 2 to 5) for PyTorch checkpoints. It builds a tree
// of values and never runs anything: a GLOBAL is resolved only if it is on the allow-list of
// names torch.load(weights_only=True) accepts; REDUCE/BUILD/BINPERSID become inert nodes that the
// checkpoint layer interprets. Containers cannot be changed once inside another, so the tree has
// no cycles; its depth is limited.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ember::io::detail {

struct PickleValue;
using PickleRef = std::shared_ptr<PickleValue>;

struct PickleValue {
  enum class Kind {
    None,
    Bool,
    Int,
    Float,
    Str,
    Bytes,
    List,
    Tuple,
    Dict,
    Global,
    Call,
    PersistentId
  };
  Kind kind = Kind::None;
  bool boolean = false;
  int64_t integer = 0;
  double floating = 0.0;
  std::string text;  // Str and Bytes: the contents; Global: "module.name"
  // List/Tuple: elements; Dict: keys and values interleaved; Call: callable, args tuple, then
  // keys and values SETITEMS added (an OrderedDict);
  // PersistentId: the id.
  std::vector<PickleRef> items;
  PickleRef state;  // Call: what BUILD set, else null
  int depth = 1;
  bool contained = false;
};

// Whether module.name is a global the reader resolves.
bool pickle_global_allowed(std::string_view module, std::string_view name);

// The deepest nesting accepted.
inline constexpr int kPickleMaxDepth = 1000;

// Runs the pickle in `data` up to STOP and returns the value left. `what` names the source in
// error messages (a file and member). `consumed`, if given, receives the bytes read up to and
// including STOP (pickles can follow one another, as in torch.save's legacy format).
PickleRef read_pickle(std::string_view data, const std::string& what, size_t* consumed = nullptr);

}  // namespace ember::io::detail
