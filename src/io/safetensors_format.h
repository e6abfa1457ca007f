// io/safetensors_format.h: decoding a whole safetensors file held in memory (read or mapped),
// shared by load_safetensors and the fuzz target.
#pragma once

#include <cstddef>
#include <string>

#include "ember/io/safetensors.h"
#include "io/file_bytes.h"

namespace ember::io::detail {

// `path` is named in errors. `source`, when the bytes are a FileBytes', has each tensor's bytes
// released once copied (peak memory: the tensors, not the file besides).
SafetensorsFile decode_safetensors(const unsigned char* bytes, size_t size, const std::string& path,
                                   Device device, const FileBytes* source = nullptr);

}  // namespace ember::io::detail
