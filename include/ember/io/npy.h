// ember/io/npy.h: NumPy's .npy format (one array: a magic string, a version, a Python-dict
// header giving dtype, order and shape, then the raw data), as numpy.save and numpy.load use.
#pragma once

#include <string>

#include "ember/tensor.h"

namespace ember::io {

// Writes `tensor` (from any device; copied back to the host) in C order, format version 1.0
// (2.0 only when the header needs more than 64 KiB), atomically (temporary file, fsync, rename).
void save_npy(const std::string& path, const Tensor& tensor);

// Reads a .npy file of format version 1.0, 2.0 or 3.0, in C or Fortran order, little- or
// big-endian, of a dtype ember has (<f4 <f8 <i4 <i8 |u1 |b1 and their big-endian forms). Object
// arrays (pickles) are refused, as are malformed headers and data that does not match the
// shape; errors name the file and the problem. The tensor is placed on `device`.
Tensor load_npy(const std::string& path, Device device = Device(kCPU));

}  // namespace ember::io
