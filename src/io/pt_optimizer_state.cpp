// io/pt_optimizer_state.cpp: a PyTorch optimizer state_dict (a PtValue) in ember's naming of
// optimizer state (ember/io/pt.h, optimizer_state_from_pt).
#include <map>

#include "ember/creation.h"
#include "ember/error.h"
#include "ember/io/pt.h"

namespace ember::io {

namespace {

[[noreturn]] void bad(const std::string& what) {
  EMBER_THROW(Value, "[optimizer_state_from_pt] ", what,
              " (expected what torch.optim.Optimizer.state_dict() returns)");
}

Tensor number(double v) {
  return scalar_tensor(v, {.dtype = kFloat64});
}

bool dropped(const std::string& option) {
  return option == "foreach" || option == "fused" || option == "capturable" ||
         option == "differentiable";
}

}  // namespace

NamedTensors optimizer_state_from_pt(const PtValue& state) {
  if (!state.is_dict()) bad(std::string("a ") + state.kind_name() + ", not a dict");
  const PtValue* per_param = state.find("state");
  const PtValue* groups = state.find("param_groups");
  if (!per_param || !groups) bad("no \"state\" or no \"param_groups\" entry");
  if (!per_param->is_dict()) bad("\"state\" is not a dict");
  if (groups->kind() != PtValue::Kind::List) bad("\"param_groups\" is not a list");

  NamedTensors out;
  std::map<int64_t, size_t> position;  // PyTorch's parameter id -> place across the groups
  std::vector<std::pair<std::string, Tensor>> options;
  size_t g = 0;
  for (const PtValue& group : groups->elements()) {
    if (!group.is_dict()) bad("param_groups[" + std::to_string(g) + "] is not a dict");
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    for (const auto& [key, value] : group.items()) {
      if (key.kind() != PtValue::Kind::Str)
        bad("param_groups[" + std::to_string(g) + "] has a key that is not a str");
      const std::string& name = key.to_str();
      const std::string where = "param_groups[" + std::to_string(g) + "][\"" + name + "\"]";
      if (name == "params") {
        if (value.kind() != PtValue::Kind::List) bad(where + " is not a list");
        for (const PtValue& id : value.elements()) {
          if (id.kind() != PtValue::Kind::Int) bad(where + " holds something not an int");
          if (!position.emplace(id.to_int(), position.size()).second)
            bad("parameter id " + std::to_string(id.to_int()) + " is in two places");
        }
      } else if (name == "betas") {
        if (value.kind() != PtValue::Kind::Tuple && value.kind() != PtValue::Kind::List)
          bad(where + " is not a pair");
        if (value.elements().size() != 2) bad(where + " is not a pair");
        options.emplace_back(prefix + "beta1", number(value.elements()[0].to_double()));
        options.emplace_back(prefix + "beta2", number(value.elements()[1].to_double()));
      } else if (dropped(name)) {
        continue;
      } else if (value.kind() == PtValue::Kind::Bool) {
        options.emplace_back(prefix + name, number(value.to_bool() ? 1.0 : 0.0));
      } else if (value.kind() == PtValue::Kind::Int || value.kind() == PtValue::Kind::Float) {
        options.emplace_back(prefix + name, number(value.to_double()));
      } else if (value.is_none()) {
        continue;  // an unset option (PyTorch's None defaults)
      } else {
        bad(where + " is a " + value.kind_name() + ", not a number or bool");
      }
    }
    ++g;
  }
  for (const auto& [key, entries] : per_param->items()) {
    if (key.kind() != PtValue::Kind::Int) bad("a \"state\" key that is not a parameter id");
    auto it = position.find(key.to_int());
    if (it == position.end())
      bad("state for parameter id " + std::to_string(key.to_int()) + ", which no group holds");
    if (!entries.is_dict())
      bad("the state of parameter " + std::to_string(key.to_int()) + " is not a dict");
    for (const auto& [name, value] : entries.items()) {
      if (name.kind() != PtValue::Kind::Str) bad("a state entry whose name is not a str");
      const std::string where = "state." + std::to_string(it->second) + "." + name.to_str();
      if (value.is_none()) continue;  // SGD's momentum_buffer without momentum
      if (value.is_tensor())
        out.emplace_back(where, value.to_tensor());
      else if (value.kind() == PtValue::Kind::Int || value.kind() == PtValue::Kind::Float)
        out.emplace_back(where, number(value.to_double()));  // "step" before PyTorch 1.12
      else
        bad(where + " is a " + value.kind_name() + ", not a tensor or number");
    }
  }
  for (auto& o : options) out.push_back(std::move(o));
  return out;
}

}  // namespace ember::io
