// nn/format.h: numbers as the modules' extra_repr prints them (C++ stream's shortest form).
#pragma once

#include <sstream>
#include <string>

namespace ember::nn {

inline std::string fmt_double(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace ember::nn
