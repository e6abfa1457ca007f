// kernels/quant_blocks.h: the byte layouts of quantized weight rows (QuantizedTensor, ember/
// quantized.h) and their element-wise dequantization, for the host and the device. A matrix
// (rows, cols) is stored as rows of row_bytes(kind, cols) bytes each:
//   Int8 (any cols): float32 scale s, then int8 q[cols];             x = s * q
//   Q8_0 (cols % 32 == 0): blocks of 32 of ggml's Q8_0 -- f16 d, int8 q[32];       x = d * q
//   Q4_0 (cols % 32 == 0): blocks of 32 of ggml's Q4_0 -- f16 d, uint8 qs[16];
//     element j < 16 of a block is the low nibble of qs[j], element j + 16 its high nibble;
//     x = d * (nibble - 8)
// Q8_0 and Q4_0 rows are the blocks of a GGUF file's row byte for byte. Multi-byte fields are
// little-endian and need no alignment.
#pragma once

#include <cstdint>
#include <cstring>

#include "ember/half.h"
#include "kernels/host_device.h"

namespace ember::kernels {

enum class QuantKind : uint8_t { Int8, Q8_0, Q4_0 };

inline constexpr int64_t kQuantBlock = 32;  // elements per Q8_0 / Q4_0 block

// Bytes of one stored row of `cols` elements.
EMBER_HOST_DEVICE inline int64_t quant_row_bytes(QuantKind kind, int64_t cols) {
  switch (kind) {
    case QuantKind::Int8:
      return 4 + cols;
    case QuantKind::Q8_0:
      return cols / kQuantBlock * 34;
    default:
      return cols / kQuantBlock * 18;
  }
}

// The float16 or float32 read at p.
EMBER_HOST_DEVICE inline float quant_f16_at(const unsigned char* p) {
  return half_detail::half_to_float(static_cast<uint16_t>(p[0] | (p[1] << 8)));
}
EMBER_HOST_DEVICE inline float quant_f32_at(const unsigned char* p) {
  float f;
  memcpy(&f, p, 4);
  return f;
}

// Element `col` of a stored row.
EMBER_HOST_DEVICE inline float dequantize_element(QuantKind kind, const unsigned char* row,
                                                  int64_t col) {
  if (kind == QuantKind::Int8)
    return quant_f32_at(row) * static_cast<float>(static_cast<int8_t>(row[4 + col]));
  const int64_t b = col / kQuantBlock, j = col % kQuantBlock;
  if (kind == QuantKind::Q8_0) {
    const unsigned char* block = row + b * 34;
    return static_cast<float>(static_cast<int8_t>(block[2 + j])) * quant_f16_at(block);
  }
  const unsigned char* block = row + b * 18;
  const int q = j < 16 ? (block[2 + j] & 0x0f) : (block[2 + j - 16] >> 4);
  return static_cast<float>(q - 8) * quant_f16_at(block);
}

}  // namespace ember::kernels
