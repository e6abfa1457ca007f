// io/npy_header.h: the header of a .npy file -- a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } -- parsed strictly.
#pragma once

#include <string>
#include <string_view>

#include "ember/shape.h"

namespace ember::io::detail {

struct NpyHeader {
  std::string descr;  // e.g. "<f4"
  bool fortran_order = false;
  Shape shape;
};

// Throws the reader's IO error: "[op] 'name' is not a valid .npy file: what".
[[noreturn]] void npy_bad(const char* op, const std::string& name, const std::string& what);

// Parses the header dict: exactly the keys descr (a string), fortran_order (True/False) and shape
// (a tuple of non-negative integers), then only whitespace.
NpyHeader parse_npy_header(std::string_view text, const char* op, const std::string& name);

}  // namespace ember::io::detail
