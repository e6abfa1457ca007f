// io/safetensors_format.h: decoding a whole safetensors file held in memory (read or mapped),
// shared by load_safetensors and the fuzz target.
#pragma once

#include <cstddef>
#include <string>

#include "ember/io/safetensors.h"

namespace ember::io::detail {

// `path` is named in errors.
SafetensorsFile decode_safetensors(const unsigned char* bytes, size_t size, const std::string& path,
                                   Device device);

}  // namespace ember::io::detail
