// io/npy_format.h: encoding and decoding the bytes of one .npy array, shared by the .npy and .npz
// readers and writers and by the fuzz targets.
#pragma once

#include <cstddef>
#include <string>

#include "ember/tensor.h"

namespace ember::io::detail {

// The whole .npy file for `t`: C order, version 1.0 unless the header needs 2.0.
std::string encode_npy(const Tensor& t);

// Decodes a whole .npy file held in memory; `op` and `name` (the file, or archive:member) are
// named in errors.
Tensor decode_npy(const unsigned char* data, size_t size, const char* op, const std::string& name,
                  Device device);

}  // namespace ember::io::detail
