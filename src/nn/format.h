// nn/format.h: numbers and sizes as the modules' extra_repr prints them, in Python's spelling.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "ember/nn_ops.h"

namespace ember::nn {

// As Python prints a float: the shortest form, with ".0" on a whole number ("2.0", "1e-05").
inline std::string fmt_double(double v) {
  std::ostringstream os;
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

inline std::string fmt_bool(bool b) {
  return b ? "True" : "False";
}

// A Python tuple of sizes: (3,), (3, 5), (1, 2, 3).
inline std::string fmt_tuple(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << (v.size() == 1 ? ",)" : ")");
  return os.str();
}

inline std::string fmt_pair(Size2d s) {
  return fmt_tuple({s.h, s.w});
}

// A pooling argument as PyTorch prints what it was given: one number when both are the same.
inline std::string fmt_size(Size2d s) {
  return s.h == s.w ? std::to_string(s.h) : fmt_pair(s);
}

}  // namespace ember::nn
