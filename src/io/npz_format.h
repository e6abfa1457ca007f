// io/npz_format.h: decoding a whole .npz archive held in memory, shared by load_npz and the fuzz
// target.
#pragma once

#include <cstddef>
#include <string>

#include "ember/io/named_tensors.h"

namespace ember::io::detail {

// `path` is named in errors.
NamedTensors decode_npz(const unsigned char* data, size_t size, const std::string& path,
                        Device device);

}  // namespace ember::io::detail
