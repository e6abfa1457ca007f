// io/gguf_format.h: decoding a whole GGUF file held in memory (read or mapped), shared by
// load_gguf and the fuzz target, and the block decoders of the quantized tensor types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

// An integer (or, gguf_meta_double, a number) of the metadata; without the key, `fallback`, or
// an error naming `who` and the key when there is none.
int64_t gguf_meta_int(const GgufFile& file, const std::string& key, std::optional<int64_t> fallback,
                      const char* who);
double gguf_meta_double(const GgufFile& file, const std::string& key, double fallback,
                        const char* who);
// Whether general.architecture is `arch`; otherwise an error naming `who` and what the file has.
void gguf_expect_architecture(const GgufFile& file, const std::string& arch, const char* who);

}  // namespace ember::io::detail
