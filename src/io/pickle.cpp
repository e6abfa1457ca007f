// io/pickle.cpp: the pickle virtual machine of io/pickle.h -- opcodes of protocols 2 to 5, memo,
// marks, frames, an allow-list of globals and limits on sizes and depth.
#include "io/pickle.h"

#include <array>
#include <cstring>
#include <unordered_map>

#include "ember/error.h"
#include "io/pt_storage_types.h"

namespace ember::io::detail {
namespace {

using Kind = PickleValue::Kind;

// The torch globals besides the storage classes (io/pt_storage_types.h).
constexpr std::array<std::string_view, 4> kTorchGlobals = {
    "_utils._rebuild_tensor_v2", "_utils._rebuild_parameter",
    "_utils._rebuild_parameter_with_state", "Size"};

class Machine {
 public:
  Machine(std::string_view data, const std::string& what) : data_(data), what_(what) {}

  PickleRef run() {
    while (true) {
      const auto op = static_cast<uint8_t>(take(1)[0]);
      if (op == '.') return finish();
      step(op);
    }
  }

  size_t consumed() const { return pos_; }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    ember::detail::throw_error(ErrorKind::IO,
                               ember::detail::str_cat("[load_pt] ", what_, ": ", message,
                                                      " (a damaged or hostile pickle; re-save "
                                                      "the file with torch.save)"));
  }

  std::string_view take(uint64_t n) {
    if (n > data_.size() - pos_)
      fail(ember::detail::str_cat("truncated at byte ", pos_, ": ", n, " more bytes wanted, ",
                                  data_.size() - pos_, " left"));
    auto out = data_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }
  uint64_t unsigned_le(size_t n) {
    const auto bytes = take(n);
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
    return v;
  }
  std::string_view line() {
    const auto end = data_.find('\n', pos_);
    if (end == std::string_view::npos) fail("truncated GLOBAL: no end of line");
    auto out = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }

  static PickleRef make(Kind kind) {
    auto v = std::make_shared<PickleValue>();
    v->kind = kind;
    return v;
  }
  PickleRef pop() {
    if (stack_.size() <= floor()) fail("pop from an empty stack");
    auto v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<PickleRef> pop_mark() {
    if (marks_.empty()) fail("no MARK before a counted opcode");
    const size_t start = marks_.back();
    marks_.pop_back();
    std::vector<PickleRef> out(std::make_move_iterator(stack_.begin() + static_cast<long>(start)),
                               std::make_move_iterator(stack_.end()));
    stack_.resize(start);
    return out;
  }
  PickleRef& top() {
    if (stack_.size() <= floor()) fail("stack empty where a value is needed");
    return stack_.back();
  }

  // Puts child into parent, keeping the tree acyclic and its depth bounded.
  void adopt(PickleValue& parent, PickleRef child) {
    if (parent.contained) fail("a container changed after it was placed inside another");
    if (child.get() == &parent) fail("a container placed inside itself");
    parent.depth = std::max(parent.depth, child->depth + 1);
    if (parent.depth > kPickleMaxDepth)
      fail(ember::detail::str_cat("nesting deeper than ", kPickleMaxDepth, " levels"));
    child->contained = true;
    parent.items.push_back(std::move(child));
  }
  PickleRef container(Kind kind, std::vector<PickleRef> items) {
    auto v = make(kind);
    for (auto& item : items) adopt(*v, std::move(item));
    return v;
  }
  void append(std::vector<PickleRef> items) {
    auto& list = top();
    if (list->kind != Kind::List) fail("APPEND to something that is not a list");
    for (auto& item : items) adopt(*list, std::move(item));
  }
  void set_items(std::vector<PickleRef> items) {
    if (items.size() % 2 != 0) fail("SETITEMS with an odd number of values");
    auto& dict = top();
    // an OrderedDict is a Call node: its keys and values follow the callable and the args
    if (dict->kind != Kind::Dict && dict->kind != Kind::Call) fail("SETITEM to a non-dict");
    for (auto& item : items) adopt(*dict, std::move(item));
  }
  PickleRef global(std::string_view module, std::string_view name) {
    if (!pickle_global_allowed(module, name))
      fail(ember::detail::str_cat("global '", module, ".", name,
                                  "' is not allowed: only tensors, storages, torch.Size and "
                                  "collections.OrderedDict are loaded, nothing is run"));
    auto v = make(Kind::Global);
    v->text = ember::detail::str_cat(module, ".", name);
    return v;
  }
  void memo_put(uint64_t index) { memo_[index] = top(); }
  PickleRef memo_get(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) fail(ember::detail::str_cat("memo index ", index, " was never stored"));
    return it->second;
  }
  PickleRef integer(int64_t i) {
    auto v = make(Kind::Int);
    v->integer = i;
    return v;
  }
  PickleRef long_value(uint64_t n) {
    if (n > 8)
      fail(ember::detail::str_cat("an integer of ", n, " bytes (at most 8 are supported)"));
    const auto bytes = take(n);
    uint64_t u = 0;
    for (size_t i = n; i-- > 0;) u = (u << 8) | static_cast<uint8_t>(bytes[i]);
    if (n > 0 && n < 8 && (static_cast<uint8_t>(bytes[n - 1]) & 0x80)) u |= ~uint64_t{0} << (8 * n);
    return integer(static_cast<int64_t>(u));
  }
  PickleRef text(Kind kind, uint64_t n) {
    auto v = make(kind);
    v->text = std::string(take(n));
    return v;
  }

  void step(uint8_t op) {
    switch (op) {
      case 0x80:
        take(1);
        return;  // PROTO
      case 0x95:
        take(8);
        return;  // FRAME: a hint only
      case '(':
        marks_.push_back(stack_.size());
        return;
      case '}':
        stack_.push_back(make(Kind::Dict));
        return;
      case ']':
        stack_.push_back(make(Kind::List));
        return;
      case ')':
        stack_.push_back(make(Kind::Tuple));
        return;
      case 't':
        stack_.push_back(container(Kind::Tuple, pop_mark()));
        return;
      case 'l':
        stack_.push_back(container(Kind::List, pop_mark()));
        return;
      case 'd': {
        auto items = pop_mark();
        if (items.size() % 2 != 0) fail("DICT with an odd number of values");
        stack_.push_back(container(Kind::Dict, std::move(items)));
        return;
      }
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        std::vector<PickleRef> items(op - 0x84);
        for (size_t i = items.size(); i-- > 0;) items[i] = pop();
        stack_.push_back(container(Kind::Tuple, std::move(items)));
        return;
      }
      case 'a': {
        auto v = pop();
        append({std::move(v)});
        return;
      }
      case 'e':
        append(pop_mark());
        return;
      case 's': {
        auto value = pop();
        auto key = pop();
        set_items({std::move(key), std::move(value)});
        return;
      }
      case 'u':
        set_items(pop_mark());
        return;
      case 'N':
        stack_.push_back(make(Kind::None));
        return;
      case 0x88:
      case 0x89: {
        auto v = make(Kind::Bool);
        v->boolean = op == 0x88;
        stack_.push_back(v);
        return;
      }
      case 'J':
        stack_.push_back(integer(static_cast<int32_t>(unsigned_le(4))));
        return;
      case 'K':
        stack_.push_back(integer(static_cast<int64_t>(unsigned_le(1))));
        return;
      case 'M':
        stack_.push_back(integer(static_cast<int64_t>(unsigned_le(2))));
        return;
      case 0x8a:
        stack_.push_back(long_value(unsigned_le(1)));
        return;
      case 0x8b:
        stack_.push_back(long_value(unsigned_le(4)));
        return;
      case 'G': {
        const auto bytes = take(8);
        uint64_t u = 0;
        for (char c : bytes) u = (u << 8) | static_cast<uint8_t>(c);
        auto v = make(Kind::Float);
        std::memcpy(&v->floating, &u, sizeof u);
        stack_.push_back(v);
        return;
      }
      case 'X':  // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
      case 0x8c:
      case 0x8d:
        stack_.push_back(text(Kind::Str, unsigned_le(op == 'X' ? 4 : op == 0x8c ? 1 : 8)));
        return;
      case 'B':  // BINBYTES, SHORT_BINBYTES, BINBYTES8
      case 'C':
      case 0x8e:
        stack_.push_back(text(Kind::Bytes, unsigned_le(op == 'B' ? 4 : op == 'C' ? 1 : 8)));
        return;
      case 'q':
        memo_put(unsigned_le(1));
        return;
      case 'r':
        memo_put(unsigned_le(4));
        return;
      case 0x94:
        memo_put(memo_.size());
        return;
      case 'h':
        stack_.push_back(memo_get(unsigned_le(1)));
        return;
      case 'j':
        stack_.push_back(memo_get(unsigned_le(4)));
        return;
      case 'c': {
        const auto module = line();
        const auto name = line();
        stack_.push_back(global(module, name));
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        auto name = pop();
        auto module = pop();
        if (module->kind != Kind::Str || name->kind != Kind::Str)
          fail("STACK_GLOBAL of values that are not strings");
        stack_.push_back(global(module->text, name->text));
        return;
      }
      case 'R':
      case 0x81: {  // REDUCE, NEWOBJ
        auto args = pop();
        auto callable = pop();
        if (callable->kind != Kind::Global) fail("REDUCE of something that is not a global");
        if (args->kind != Kind::Tuple) fail("REDUCE with arguments that are not a tuple");
        stack_.push_back(container(Kind::Call, {std::move(callable), std::move(args)}));
        return;
      }
      case 'b': {  // BUILD
        auto state = pop();
        auto& object = top();
        if (object->kind != Kind::Call) fail("BUILD on something that is not an object");
        if (object->contained) fail("a container changed after it was placed inside another");
        if (object.get() == state.get()) fail("an object built from itself");
        object->depth = std::max(object->depth, state->depth + 1);
        if (object->depth > kPickleMaxDepth)
          fail(ember::detail::str_cat("nesting deeper than ", kPickleMaxDepth, " levels"));
        state->contained = true;
        if (object->state) fail("BUILD twice on one object");
        object->state = std::move(state);
        return;
      }
      case 'Q':
        stack_.push_back(container(Kind::PersistentId, {pop()}));
        return;
      case '0':
        pop();
        return;
      case '1':
        pop_mark();
        return;
      case '2':
        stack_.push_back(top());
        return;
      default:
        fail(ember::detail::str_cat("opcode 0x", "0123456789abcdef"[op >> 4],
                                    "0123456789abcdef"[op & 15], " at byte ", pos_ - 1,
                                    " is not supported"));
    }
  }

  PickleRef finish() {
    if (!marks_.empty()) fail("STOP with an open MARK");
    if (stack_.size() != 1)
      fail(ember::detail::str_cat("STOP with ", stack_.size(), " values on the stack"));
    return stack_.back();
  }

  std::string_view data_;
  const std::string& what_;
  size_t pos_ = 0;
  std::vector<PickleRef> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PickleRef> memo_;
};

}  // namespace

bool pickle_global_allowed(std::string_view module, std::string_view name) {
  if (module == "collections" && name == "OrderedDict") return true;
  if (module == "_codecs" && name == "encode") return true;  // bytes, as protocol 2 writes them
  if (module == "torch._utils") {
    for (auto g : kTorchGlobals)
      if (g.starts_with("_utils.") && g.substr(7) == name) return true;
    return false;
  }
  if (module != "torch") return false;
  for (auto g : kTorchGlobals)
    if (g == name) return true;
  return pt_storage_type(name) != nullptr;
}

PickleRef read_pickle(std::string_view data, const std::string& what, size_t* consumed) {
  Machine machine(data, what);
  auto value = machine.run();
  if (consumed) *consumed = machine.consumed();
  return value;
}

}  // namespace ember::io::detail
