// io/pt_value.cpp: PtValue, the value tree of a PyTorch checkpoint (ember/io/pt.h).
#include "ember/error.h"
#include "ember/io/pt.h"

namespace ember::io {

struct PtValue::Node {
  Kind kind = Kind::None;
  bool boolean = false;
  int64_t integer = 0;
  double floating = 0.0;
  std::string text;
  Tensor tensor;
  bool parameter = false;
  bool ordered = false;
  std::vector<PtValue> elements;
  std::vector<Item> items;
};

namespace {

std::shared_ptr<PtValue::Node> make(PtValue::Kind kind) {
  auto n = std::make_shared<PtValue::Node>();
  n->kind = kind;
  return n;
}

const char* name_of(PtValue::Kind kind) {
  switch (kind) {
    case PtValue::Kind::None:
      return "None";
    case PtValue::Kind::Bool:
      return "bool";
    case PtValue::Kind::Int:
      return "int";
    case PtValue::Kind::Float:
      return "float";
    case PtValue::Kind::Str:
      return "str";
    case PtValue::Kind::Bytes:
      return "bytes";
    case PtValue::Kind::Tensor:
      return "Tensor";
    case PtValue::Kind::List:
      return "list";
    case PtValue::Kind::Tuple:
      return "tuple";
    case PtValue::Kind::Dict:
      return "dict";
  }
  return "?";
}

// A key as Python would print it, for messages.
std::string key_repr(const PtValue& key) {
  switch (key.kind()) {
    case PtValue::Kind::Str:
      return "'" + key.to_str() + "'";
    case PtValue::Kind::Int:
      return std::to_string(key.to_int());
    default:
      return std::string("<") + key.kind_name() + ">";
  }
}

std::string keys_of(const std::vector<PtValue::Item>& items) {
  std::string out;
  size_t shown = 0;
  for (const auto& [k, v] : items) {
    if (shown == 20) return out + ", ...";
    out += (shown++ ? ", " : "") + key_repr(k);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

PtValue::PtValue() : node_(make(Kind::None)) {}
PtValue::PtValue(std::shared_ptr<const Node> node) : node_(std::move(node)) {}

PtValue::PtValue(bool value) {
  auto n = make(Kind::Bool);
  n->boolean = value;
  node_ = std::move(n);
}
PtValue::PtValue(int value) : PtValue(static_cast<int64_t>(value)) {}
PtValue::PtValue(int64_t value) {
  auto n = make(Kind::Int);
  n->integer = value;
  node_ = std::move(n);
}
PtValue::PtValue(double value) {
  auto n = make(Kind::Float);
  n->floating = value;
  node_ = std::move(n);
}
PtValue::PtValue(const char* text) : PtValue(std::string(text)) {}
PtValue::PtValue(std::string text) {
  auto n = make(Kind::Str);
  n->text = std::move(text);
  node_ = std::move(n);
}
PtValue::PtValue(Tensor tensor, bool parameter) {
  EMBER_CHECK(tensor.defined(), "[PtValue] an undefined tensor cannot be a checkpoint value");
  auto n = make(Kind::Tensor);
  n->tensor = std::move(tensor);
  n->parameter = parameter;
  node_ = std::move(n);
}

PtValue PtValue::bytes(std::string data) {
  auto n = make(Kind::Bytes);
  n->text = std::move(data);
  return PtValue(std::shared_ptr<const Node>(std::move(n)));
}
PtValue PtValue::list(std::vector<PtValue> elements) {
  auto n = make(Kind::List);
  n->elements = std::move(elements);
  return PtValue(std::shared_ptr<const Node>(std::move(n)));
}
PtValue PtValue::tuple(std::vector<PtValue> elements) {
  auto n = make(Kind::Tuple);
  n->elements = std::move(elements);
  return PtValue(std::shared_ptr<const Node>(std::move(n)));
}
PtValue PtValue::dict(std::vector<Item> items, bool ordered) {
  auto n = make(Kind::Dict);
  n->items = std::move(items);
  n->ordered = ordered;
  return PtValue(std::shared_ptr<const Node>(std::move(n)));
}
PtValue PtValue::state_dict(const NamedTensors& tensors) {
  std::vector<Item> items;
  items.reserve(tensors.size());
  for (const auto& [name, t] : tensors) items.emplace_back(PtValue(name), PtValue(t));
  return dict(std::move(items), true);
}

const PtValue::Node& PtValue::node() const {
  return *node_;
}
PtValue::Kind PtValue::kind() const {
  return node().kind;
}
const char* PtValue::kind_name() const {
  return name_of(kind());
}

#define EMBER_PT_EXPECT(cond, want)                                                  \
  EMBER_CHECK(cond, "[PtValue] expected ", want, ", but the value is ", kind_name(), \
              " (a checkpoint's structure is not what the caller expects)")

bool PtValue::to_bool() const {
  EMBER_PT_EXPECT(kind() == Kind::Bool, "bool");
  return node().boolean;
}
int64_t PtValue::to_int() const {
  EMBER_PT_EXPECT(kind() == Kind::Int, "int");
  return node().integer;
}
double PtValue::to_double() const {
  EMBER_PT_EXPECT(kind() == Kind::Float || kind() == Kind::Int, "float");
  return kind() == Kind::Int ? static_cast<double>(node().integer) : node().floating;
}
const std::string& PtValue::to_str() const {
  EMBER_PT_EXPECT(kind() == Kind::Str || kind() == Kind::Bytes, "str");
  return node().text;
}
const Tensor& PtValue::to_tensor() const {
  EMBER_PT_EXPECT(kind() == Kind::Tensor, "Tensor");
  return node().tensor;
}
bool PtValue::is_parameter() const {
  return kind() == Kind::Tensor && node().parameter;
}
const std::vector<PtValue>& PtValue::elements() const {
  EMBER_PT_EXPECT(kind() == Kind::List || kind() == Kind::Tuple, "list or tuple");
  return node().elements;
}
const std::vector<PtValue::Item>& PtValue::items() const {
  EMBER_PT_EXPECT(kind() == Kind::Dict, "dict");
  return node().items;
}
bool PtValue::ordered() const {
  return kind() == Kind::Dict && node().ordered;
}

const PtValue* PtValue::find(std::string_view key) const {
  for (const auto& [k, v] : items())
    if (k.kind() == Kind::Str && k.to_str() == key) return &v;
  return nullptr;
}
const PtValue* PtValue::find(int64_t key) const {
  for (const auto& [k, v] : items())
    if (k.kind() == Kind::Int && k.to_int() == key) return &v;
  return nullptr;
}
const PtValue& PtValue::at(std::string_view key) const {
  const PtValue* v = find(key);
  EMBER_CHECK_KIND(Index, v, "[PtValue] no key '", key,
                   "' in the dict; its keys: ", keys_of(items()));
  return *v;
}
const PtValue& PtValue::at(int64_t key) const {
  const PtValue* v = find(key);
  EMBER_CHECK_KIND(Index, v, "[PtValue] no key ", key,
                   " in the dict; its keys: ", keys_of(items()));
  return *v;
}

NamedTensors PtValue::to_named_tensors() const {
  EMBER_CHECK(kind() == Kind::Dict,
              "[PtValue] a state_dict is a dict of str -> Tensor, but the "
              "value is ",
              kind_name());
  NamedTensors out;
  out.reserve(items().size());
  for (const auto& [k, v] : items()) {
    EMBER_CHECK(k.kind() == Kind::Str, "[PtValue] a state_dict's keys are str, but one is ",
                key_repr(k), " (", k.kind_name(), ")");
    EMBER_CHECK(v.kind() == Kind::Tensor, "[PtValue] state_dict entry '", k.to_str(), "' is ",
                v.kind_name(),
                ", not a Tensor (is this a training checkpoint? take its "
                "model entry, e.g. value.at(\"model\"))");
    out.emplace_back(k.to_str(), v.to_tensor());
  }
  return out;
}

}  // namespace ember::io
