// base/error.cpp: throwing ember::Error.
#include "ember/error.h"

namespace ember {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Shape:
      return "shape";
    case ErrorKind::DType:
      return "dtype";
    case ErrorKind::Device:
      return "device";
    case ErrorKind::Index:
      return "index";
    case ErrorKind::Value:
      return "value";
    case ErrorKind::OutOfMemory:
      return "out-of-memory";
    case ErrorKind::Cuda:
      return "cuda";
    case ErrorKind::IO:
      return "io";
    case ErrorKind::NotImplemented:
      return "not-implemented";
  }
  return "unknown";
}

namespace detail {
void throw_error(ErrorKind kind, std::string message) {
  throw Error(kind, message);
}
}  // namespace detail

}  // namespace ember
