// io/pt_storage_types.h: torch's storage classes, the globals a checkpoint's pickle names
// (torch.FloatStorage, ...), with the dtype each holds -- ember's, or the torch dtype ember lacks.
// The one list the pickle allow-list, the reader and the writer of .pt files use.
#pragma once

#include <cstddef>
#include <string_view>

#include "ember/dtype.h"

namespace ember::io::detail {

struct PtStorageType {
  std::string_view name;         // the class, after "torch."
  std::string_view torch_dtype;  // what the class holds, in torch's words
  bool supported;                // an ember dtype: `dtype`
  DType dtype;
  size_t bytes;  // per element, as the file stores them
};

inline constexpr PtStorageType kPtStorageTypes[] = {
    {"DoubleStorage", "float64", true, kFloat64, 8},
    {"FloatStorage", "float32", true, kFloat32, 4},
    {"HalfStorage", "float16", true, kFloat16, 2},
    {"BFloat16Storage", "bfloat16", true, kBFloat16, 2},
    {"LongStorage", "int64", true, kInt64, 8},
    {"IntStorage", "int32", true, kInt32, 4},
    {"ByteStorage", "uint8", true, kUInt8, 1},
    {"BoolStorage", "bool", true, kBool, 1},
    {"ShortStorage", "int16", false, kInt32, 2},
    {"CharStorage", "int8", false, kInt32, 1},
    {"ComplexFloatStorage", "complex64", false, kFloat32, 8},
    {"ComplexDoubleStorage", "complex128", false, kFloat64, 16},
};

// The class named `name` (after "torch."), or null.
inline const PtStorageType* pt_storage_type(std::string_view name) {
  for (const auto& t : kPtStorageTypes)
    if (t.name == name) return &t;
  return nullptr;
}

// The class a pickle of `global` ("module.name") names, or null.
inline const PtStorageType* pt_storage_global(std::string_view global) {
  return global.starts_with("torch.") ? pt_storage_type(global.substr(6)) : nullptr;
}

}  // namespace ember::io::detail
