// base/dtype.cpp: dtype and scalar names.
#include "ember/dtype.h"

#include <ostream>

#include "ember/scalar.h"

namespace ember {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::UInt8:
      return "uint8";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
  }
  return "unknown";
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
