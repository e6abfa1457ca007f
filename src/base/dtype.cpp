// base/dtype.cpp: dtypes by name, and dtype and scalar printing.
#include "ember/dtype.h"

#include <ostream>

#include "ember/scalar.h"

namespace ember {

std::optional<DType> dtype_from_name(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  for (DType t : kAllDTypes)
    if (name == dtype_name(t)) return t;
  // PyTorch's other names for the same dtypes (torch.float is torch.float32, ...).
  struct Alias {
    std::string_view name;
    DType dtype;
  };
  for (Alias a : {Alias{"float", kFloat32}, Alias{"double", kFloat64}, Alias{"long", kInt64},
                  Alias{"int", kInt32}, Alias{"half", kFloat16}})
    if (name == a.name) return a.dtype;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, DType t) {
  return os << dtype_name(t);
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return os << (s.to<bool>() ? "True" : "False");
    case Scalar::Kind::Int:
      return os << s.to_int();
    case Scalar::Kind::Float:
      return os << s.to_double();
  }
  return os;
}

}  // namespace ember
