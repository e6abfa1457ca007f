// kernels/quant_blocks.h: the byte layouts of quantized weight rows (QuantizedTensor, ember/
// quantized.h) and their element-wise dequantization, for the host and the device. A matrix
// (rows, cols) is stored as rows of row_bytes(kind, cols) bytes each:
//   Int8 (any cols): float32 scale s, then int8 q[cols];             x = s * q
//   Q8_0 (cols % 32 == 0): blocks of 32 of ggml's Q8_0 -- f16 d, int8 q[32];       x = d * q
//   Q4_0 (cols % 32 == 0): blocks of 32 of ggml's Q4_0 -- f16 d, uint8 qs[16];
//     element j < 16 of a block is the low nibble of qs[j], element j + 16 its high nibble;
//     x = d * (nibble - 8)
//   Q4_1 (cols % 32 == 0): ggml's Q4_1 -- f16 d, f16 m, uint8 qs[16], nibbles as Q4_0's;
//     x = d * nibble + m
// Q8_0, Q4_0 and Q4_1 rows are the blocks of a GGUF file's row byte for byte. Multi-byte fields are
// little-endian and need no alignment.
#pragma once

#include <cstdint>
#include <cstring>

#include "ember/half.h"
#include "kernels/host_device.h"

namespace ember::kernels {

enum class QuantKind : uint8_t { Int8, Q8_0, Q4_0, Q4_1 };

inline constexpr int64_t kQuantBlock = 32;  // elements per Q8_0 / Q4_0 / Q4_1 block

// Bytes of one block of 32 (Q8_0, Q4_0, Q4_1).
EMBER_HOST_DEVICE constexpr int64_t quant_block_bytes(QuantKind kind) {
  return kind == QuantKind::Q8_0 ? 34 : kind == QuantKind::Q4_0 ? 18 : 20;
}

// Bytes of one stored row of `cols` elements.
EMBER_HOST_DEVICE inline int64_t quant_row_bytes(QuantKind kind, int64_t cols) {
  switch (kind) {
    case QuantKind::Int8:
      return 4 + cols;
    default:
      return cols / kQuantBlock * quant_block_bytes(kind);
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
  const unsigned char* block = row + b * quant_block_bytes(kind);
  if (kind == QuantKind::Q8_0)
    return static_cast<float>(static_cast<int8_t>(block[2 + j])) * quant_f16_at(block);
  const unsigned char* qs = block + (kind == QuantKind::Q4_0 ? 2 : 4);
  const int q = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
  if (kind == QuantKind::Q4_0) return static_cast<float>(q - 8) * quant_f16_at(block);
  return static_cast<float>(q) * quant_f16_at(block) + quant_f16_at(block + 2);
}

}  // namespace ember::kernels
