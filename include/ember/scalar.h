// ember/scalar.h: a number that is not a tensor (bool, integer or floating), as in `t + 2.0`.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <type_traits>

#include "ember/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  template <class T>
  requires std::is_arithmetic_v<T> Scalar(T v) {  // NOLINT: implicit, numbers convert as in Python
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool;
      i_ = v;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::Int;
      i_ = static_cast<int64_t>(v);
    } else {
      kind_ = Kind::Float;
      d_ = static_cast<double>(v);
    }
  }
  template <class T>
  requires is_reduced_float_v<T> Scalar(T v) : Scalar(static_cast<float>(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  // The dtype of a tensor holding exactly this value: float64, int64 or bool.
  DType dtype() const {
    return kind_ == Kind::Float ? kFloat64 : kind_ == Kind::Int ? kInt64 : kBool;
  }
  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_; }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>)
      return kind_ == Kind::Float ? d_ != 0 : i_ != 0;
    else if constexpr (std::is_floating_point_v<T>)
      return static_cast<T>(to_double());
    else if constexpr (is_reduced_float_v<T>)
      return T(static_cast<float>(to_double()));
    else
      return kind_ == Kind::Float ? static_cast<T>(static_cast<int64_t>(d_)) : static_cast<T>(i_);
  }

 private:
  Kind kind_ = Kind::Int;
  int64_t i_ = 0;
  double d_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace ember
