// nn/json_fields.h: reading a model's config.json field by field with checks -- every error names
// the file and the key, what was found and what is allowed, instead of nlohmann's
// "type must be number, but is string". A missing key keeps the default.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>

#include "ember/error.h"

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

}  // namespace ember::nn::detail
