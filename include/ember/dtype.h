// ember/dtype.h: element types, their sizes and names, and PyTorch's type promotion rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <type_traits>

namespace ember {

// Ordered so that promotion between any two is their maximum.
enum class DType : uint8_t { Bool, UInt8, Int32, Int64, Float32, Float64 };

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kByte = kUInt8;
inline constexpr DType kInt = kInt32;
inline constexpr DType kLong = kInt64;
inline constexpr DType kFloat = kFloat32;
inline constexpr DType kDouble = kFloat64;

constexpr size_t element_size(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
      return 1;
    case DType::Int32:
    case DType::Float32:
      return 4;
    case DType::Int64:
    case DType::Float64:
      return 8;
  }
  return 0;
}
constexpr bool is_floating_point(DType t) {
  return t == kFloat32 || t == kFloat64;
}
constexpr bool is_integral(DType t, bool include_bool) {
  return t == kUInt8 || t == kInt32 || t == kInt64 || (include_bool && t == kBool);
}

// "float32", "int64", ... as in torch.float32.
const char* dtype_name(DType t);
std::ostream& operator<<(std::ostream& os, DType t);

// torch.promote_types for the dtypes ember has.
constexpr DType promote_types(DType a, DType b) {
  return a > b ? a : b;
}

// torch.can_cast: no float -> integral, no non-bool -> bool.
constexpr bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && is_integral(to, true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

// The default floating dtype (torch.get_default_dtype()).
constexpr DType default_dtype() {
  return kFloat32;
}

template <class T>
constexpr DType dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>)
    return kBool;
  else if constexpr (std::is_same_v<U, uint8_t>)
    return kUInt8;
  else if constexpr (std::is_same_v<U, int32_t>)
    return kInt32;
  else if constexpr (std::is_same_v<U, int64_t> || std::is_same_v<U, long long>)
    return kInt64;
  else if constexpr (std::is_same_v<U, float>)
    return kFloat32;
  else if constexpr (std::is_same_v<U, double>)
    return kFloat64;
  else
    static_assert(sizeof(U) == 0, "ember has no dtype for this C++ type");
}

// Calls f.template operator()<T>() with T the C++ type of dtype t.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool:
      return f.template operator()<bool>();
    case DType::UInt8:
      return f.template operator()<uint8_t>();
    case DType::Int32:
      return f.template operator()<int32_t>();
    case DType::Int64:
      return f.template operator()<int64_t>();
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      break;
  }
  return f.template operator()<double>();
}

}  // namespace ember
