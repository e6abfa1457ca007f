// io/gguf_format.h: decoding a whole GGUF file held in memory (read or mapped), shared by
// load_gguf and the fuzz target, and the block decoders of the quantized tensor types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/io/gguf.h"
#include "io/file_bytes.h"

namespace ember::io::detail {

// `path` is named in errors. `source`, when the bytes are a FileBytes', has each tensor's bytes
// released once copied.
GgufFile decode_gguf(const unsigned char* bytes, size_t size, const std::string& path,
                     Device device, const GgufOptions& options = {},
                     const FileBytes* source = nullptr);

// Dequantizes `blocks` whole blocks of `type` at `src` into blocks * ggml_block(type).elements
// floats at `dst` (F32, F16 and BF16 count as blocks of one element).
void gguf_dequantize_blocks(GgmlType type, const unsigned char* src, int64_t blocks, float* dst);

}  // namespace ember::io::detail
