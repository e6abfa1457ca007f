// ember/dtype.h: element types -- the enum, names, sizes and kinds generated from the registry
// (ember/dtypes.def), visit_dtype, and PyTorch's type promotion table and can_cast rule.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string_view>
#include <type_traits>

#include "ember/half.h"

namespace ember {

enum class DType : uint8_t {
#define EMBER_DTYPE(Name, ...) Name,
#include "ember/dtypes.def"
#undef EMBER_DTYPE
};

inline constexpr int kNumDTypes = 0
#define EMBER_DTYPE(...) +1
#include "ember/dtypes.def"
#undef EMBER_DTYPE
    ;

// kFloat32, kInt64, ...: one constant per registry line, and PyTorch's aliases.
#define EMBER_DTYPE(Name, ...) inline constexpr DType k##Name = DType::Name;
#include "ember/dtypes.def"
#undef EMBER_DTYPE
inline constexpr DType kByte = kUInt8;
inline constexpr DType kInt = kInt32;
inline constexpr DType kLong = kInt64;
inline constexpr DType kFloat = kFloat32;
inline constexpr DType kDouble = kFloat64;
inline constexpr DType kHalf = kFloat16;

// Every dtype, in the registry's order.
inline constexpr std::array<DType, kNumDTypes> kAllDTypes = {
#define EMBER_DTYPE(Name, ...) DType::Name,
#include "ember/dtypes.def"
#undef EMBER_DTYPE
};

// The C++ type of a dtype: dtype_t<kFloat32> is float.
namespace dtype_detail {
template <DType>
struct CppType;
#define EMBER_DTYPE(Name, T, ...) \
  template <>                     \
  struct CppType<DType::Name> {   \
    using type = T;               \
  };
#include "ember/dtypes.def"
#undef EMBER_DTYPE

template <class T>
struct DTypeOf {
  static_assert(sizeof(T) == 0, "ember has no dtype for this C++ type");
};
#define EMBER_DTYPE(Name, T, ...)               \
  template <>                                   \
  struct DTypeOf<T> {                           \
    static constexpr DType value = DType::Name; \
  };
#include "ember/dtypes.def"
#undef EMBER_DTYPE
}  // namespace dtype_detail

template <DType t>
using dtype_t = typename dtype_detail::CppType<t>::type;

enum class DTypeKind : uint8_t { Bool, Unsigned, Signed, Float };

// One registry line: the facts every other file reads instead of naming dtypes itself.
struct DTypeInfo {
  const char* name;         // "float32", as after "torch."
  size_t size;              // bytes per element
  DTypeKind kind;           //
  const char* safetensors;  // "F32"
  const char* numpy;        // "<f4", or "" where NumPy has no such type
  uint8_t dlpack_code;      // DLDataTypeCode
  uint8_t dlpack_bits;      //
  DType opmath;             // the dtype kernels compute it in (float32 for the 16-bit floats)
};

inline constexpr DTypeInfo kDTypeInfo[kNumDTypes] = {
#define EMBER_DTYPE(Name, T, C, kind, torch_name, st, np, dl_code, dl_bits) \
  {torch_name, sizeof(T), DTypeKind::kind, st,                              \
   np,         dl_code,   dl_bits,         dtype_detail::DTypeOf<C>::value},
#include "ember/dtypes.def"
#undef EMBER_DTYPE
};

constexpr const DTypeInfo& dtype_info(DType t) {
  return kDTypeInfo[static_cast<int>(t)];
}
constexpr size_t element_size(DType t) {
  return dtype_info(t).size;
}
constexpr bool is_floating_point(DType t) {
  return dtype_info(t).kind == DTypeKind::Float;
}
constexpr bool is_integral(DType t, bool include_bool) {
  DTypeKind k = dtype_info(t).kind;
  return k == DTypeKind::Unsigned || k == DTypeKind::Signed ||
         (include_bool && k == DTypeKind::Bool);
}
constexpr bool is_signed(DType t) {
  DTypeKind k = dtype_info(t).kind;
  return k == DTypeKind::Signed || k == DTypeKind::Float;
}

// "float32", "int64", ... as in torch.float32.
constexpr const char* dtype_name(DType t) {
  return dtype_info(t).name;
}
// The dtype of a torch name: "float32" or an alias PyTorch accepts ("float", "double", "long",
// "int", "half"); an optional "torch." prefix is allowed.
std::optional<DType> dtype_from_name(std::string_view name);
std::ostream& operator<<(std::ostream& os, DType t);

namespace dtype_detail {
// PyTorch's promotion table (c10::promoteTypes) on ember's dtypes, one row and column per registry
// line in its order; tests/test_dtype.cpp checks every pair against torch.promote_types.
inline constexpr DType b1 = kBool, u1 = kUInt8, i4 = kInt32, i8 = kInt64, f2 = kFloat16,
                       bf = kBFloat16, f4 = kFloat32, f8 = kFloat64;
inline constexpr DType kPromotion[kNumDTypes][kNumDTypes] = {
    /*        b1  u1  i4  i8  f2  bf  f4  f8 */
    /* b1 */ {b1, u1, i4, i8, f2, bf, f4, f8},
    /* u1 */ {u1, u1, i4, i8, f2, bf, f4, f8},
    /* i4 */ {i4, i4, i4, i8, f2, bf, f4, f8},
    /* i8 */ {i8, i8, i8, i8, f2, bf, f4, f8},
    /* f2 */ {f2, f2, f2, f2, f2, f4, f4, f8},
    /* bf */ {bf, bf, bf, bf, f4, bf, f4, f8},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8},
};
// A row left out would read as bool: every dtype promotes with itself to itself, symmetrically.
constexpr bool promotion_table_consistent() {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kPromotion[i][i] != kAllDTypes[i]) return false;
    for (int j = 0; j < kNumDTypes; ++j)
      if (kPromotion[i][j] != kPromotion[j][i]) return false;
  }
  return true;
}
static_assert(promotion_table_consistent(), "the promotion table does not match dtypes.def");
}  // namespace dtype_detail

// torch.promote_types.
constexpr DType promote_types(DType a, DType b) {
  return dtype_detail::kPromotion[static_cast<int>(a)][static_cast<int>(b)];
}

// torch.can_cast: no floating -> integral or bool, no non-bool -> bool.
constexpr bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && is_integral(to, true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

// The default floating dtype (torch.get_default_dtype()).
constexpr DType default_dtype() {
  return kFloat32;
}

// The type kernels compute in for elements of type T (PyTorch's opmath_type): float for Half and
// BFloat16, T itself otherwise.
namespace dtype_detail {
template <class T>
struct OpMath {
  using type = T;
};
#define EMBER_DTYPE(Name, T, C, ...) \
  template <>                        \
  struct OpMath<T> {                 \
    using type = C;                  \
  };
#include "ember/dtypes.def"
#undef EMBER_DTYPE
}  // namespace dtype_detail
template <class T>
using opmath_t = typename dtype_detail::OpMath<std::remove_cv_t<T>>::type;

// The dtype of a C++ type: dtype_of<float>() is kFloat32 (long long counts as int64).
template <class T>
constexpr DType dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, long long> && !std::is_same_v<int64_t, long long>)
    return kInt64;
  else
    return dtype_detail::DTypeOf<U>::value;
}

// Calls f.template operator()<T>() with T the C++ type of dtype t.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
#define EMBER_DTYPE(Name, T, ...) \
  case DType::Name:               \
    return f.template operator()<T>();
#include "ember/dtypes.def"
#undef EMBER_DTYPE
  }
  __builtin_unreachable();
}

// The dtype kernels compute t in (opmath_t's dtype): float32 for float16 and bfloat16, t itself
// otherwise.
constexpr DType opmath_dtype(DType t) {
  return dtype_info(t).opmath;
}
// float16 and bfloat16: stored in 16 bits, computed in float32.
constexpr bool is_reduced_float(DType t) {
  return is_floating_point(t) && element_size(t) == 2;
}

}  // namespace ember
