// nn/json_fields.h: reading a model's config.json field by field with checks -- every error names
// the file and the key, what was found and what is allowed, instead of nlohmann's
// "type must be number, but is string". A missing key keeps the default.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ember/error.h"
#include "ember/nn/module.h"

namespace ember::nn::detail {

class JsonFields {
 public:
  JsonFields(const nlohmann::json& j, std::string source) : j_(j), source_(std::move(source)) {
    EMBER_CHECK_KIND(IO, j.is_object(), "[", source_, "] must hold a JSON object, not ",
                     j.type_name());
  }

  // A whole number from lo to hi.
  int64_t integer(const char* key, int64_t fallback, int64_t lo, int64_t hi) const {
    const nlohmann::json* v = find(key);
    if (!v) return fallback;
    const bool whole =
        v->is_number_integer() ||
        (v->is_number_float() && std::nearbyint(v->get<double>()) == v->get<double>() &&
         std::fabs(v->get<double>()) < 9e15);
    EMBER_CHECK_KIND(Value, whole, where(key), " must be a whole number, not ", shown(*v));
    const auto x =
        v->is_number_integer() ? v->get<int64_t>() : static_cast<int64_t>(v->get<double>());
    EMBER_CHECK_KIND(Value, x >= lo && x <= hi, where(key), " is ", x, "; it must be from ", lo,
                     " to ", hi);
    return x;
  }

  // A finite number from lo to hi.
  double number(const char* key, double fallback, double lo, double hi) const {
    const nlohmann::json* v = find(key);
    if (!v) return fallback;
    EMBER_CHECK_KIND(Value, v->is_number(), where(key), " must be a number, not ", shown(*v));
    const double x = v->get<double>();
    EMBER_CHECK_KIND(Value, std::isfinite(x) && x >= lo && x <= hi, where(key), " is ", x,
                     "; it must be from ", lo, " to ", hi);
    return x;
  }

  std::string string(const char* key, const std::string& fallback) const {
    const nlohmann::json* v = find(key);
    if (!v) return fallback;
    EMBER_CHECK_KIND(Value, v->is_string(), where(key), " must be a string, not ", shown(*v));
    return v->get<std::string>();
  }

  bool boolean(const char* key, bool fallback) const {
    const nlohmann::json* v = find(key);
    if (!v) return fallback;
    EMBER_CHECK_KIND(Value, v->is_boolean(), where(key), " must be true or false, not ", shown(*v));
    return v->get<bool>();
  }

  // A token id or a list of them (eos_token_id); none when absent or null.
  std::vector<int64_t> token_ids(const char* key) const {
    std::vector<int64_t> out;
    const nlohmann::json* v = find(key);
    if (!v) return out;
    const auto items = v->is_array() ? *v : nlohmann::json::array({*v});
    for (const auto& id : items) {
      EMBER_CHECK_KIND(Value, id.is_number_integer() && id.get<int64_t>() >= 0, where(key),
                       " must be a token id or a list of them, not ", shown(*v));
      out.push_back(id.get<int64_t>());
    }
    return out;
  }

  // "[file] key": the start of a message about one field.
  std::string where(const char* key) const { return "[" + source_ + "] \"" + key + "\""; }

 private:
  const nlohmann::json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  static std::string shown(const nlohmann::json& v) {
    std::string s = v.dump();
    if (s.size() > 40) s = s.substr(0, 40) + "...";
    return std::string(v.type_name()) + " " + s;
  }

  const nlohmann::json& j_;
  std::string source_;
};

// The JSON of a file's text; an IO error "[op] source does not parse: ..." otherwise.
inline nlohmann::json parse_json(const std::string& text, const char* op,
                                 const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::IO,
                std::string("[") + op + "] " + source + " does not parse: " + e.what());
  }
}

// A checkpoint's shapes by name, to check the sizes a config claims before a model of that many
// layers or that large a vocabulary is built: errors name the config key, the tensor and both
// sizes.
class WeightShapes {
 public:
  // strip: a prefix some checkpoints put before every name ("bert.").
  WeightShapes(const StateDict& weights, std::string model, std::string source,
               const std::string& strip = "")
      : model_(std::move(model)), source_(std::move(source)) {
    for (const auto& [name, t] : weights)
      shapes_[!strip.empty() && name.rfind(strip, 0) == 0 ? name.substr(strip.size()) : name] =
          t.sizes();
  }
  // 1 + the largest N of the names "<prefix>N.*" (0 when none).
  int64_t layers(const std::string& prefix) const {
    int64_t n = 0;
    for (const auto& [name, shape] : shapes_) {
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string index =
          name.substr(prefix.size(), name.find('.', prefix.size()) - prefix.size());
      if (!index.empty() && index.size() < 7 &&
          index.find_first_not_of("0123456789") == std::string::npos)
        n = std::max<int64_t>(n, std::stoll(index) + 1);
    }
    return n;
  }
  void expect_layers(const char* key, int64_t value, const std::string& prefix) const {
    const int64_t n = layers(prefix);
    EMBER_CHECK_KIND(Value, n == value, "[", model_, "] \"", key, "\" is ", value,
                     " in config.json, but ", source_, " has weights of ", n,
                     " layers; the config and the weights are of different models");
  }
  // tensor's size along dim must be value.
  void expect(const char* key, int64_t value, const std::string& tensor, size_t dim) const {
    auto it = shapes_.find(tensor);
    EMBER_CHECK_KIND(Value, it != shapes_.end(), "[", model_, "] ", source_, " has no ", tensor,
                     "; it does not hold ", model_, " weights");
    EMBER_CHECK_KIND(Value, it->second.size() > dim && it->second[dim] == value, "[", model_,
                     "] \"", key, "\" is ", value, " in config.json, but ", source_, " has ",
                     tensor, " of shape ", shape_str(it->second),
                     "; the config and the weights are of different models");
  }

 private:
  std::string model_, source_;
  std::map<std::string, Shape> shapes_;
};

}  // namespace ember::nn::detail
