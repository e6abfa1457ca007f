// io/gguf_quant.cpp: the ggml block formats GGUF tensors are stored in, and their dequantization
// to float as the formats define it (the order of the float operations is the format's reference
// one, so results are bit for bit those of llama.cpp's dequantization).
//
//   Q8_0 (32 elements, 34 bytes): f16 d, int8 q[32];           x = d * q
//   Q4_0 (32 elements, 18 bytes): f16 d, uint8 qs[16];         x = d * (nibble - 8)
//   Q4_1 (32 elements, 20 bytes): f16 d, f16 m, uint8 qs[16];  x = d * nibble + m
//     element j < 16 is the low nibble of qs[j], element j + 16 its high nibble.
//   Q4_K (256 elements, 144 bytes): f16 d, f16 dmin, uint8 scales[12], uint8 qs[128];
//     8 sub-blocks of 32 with a 6-bit scale sc and min m each; x = (d * sc) * nibble - dmin * m.
//   Q5_K (256 elements, 176 bytes): f16 d, f16 dmin, uint8 scales[12], uint8 qh[32],
//     uint8 qs[128]; as Q4_K with a fifth bit from qh: x = (d * sc) * (nibble + 16 * bit) - dmin *
//     m. In both, 64 elements at a time (c = 0..3) use qs[32c .. 32c + 32): element 64c + l is the
//     low nibble of qs[32c + l] (sub-block 2c), element 64c + 32 + l its high nibble (sub-block
//     2c + 1); Q5_K's fifth bits are bit 2c and 2c + 1 of qh[l].
//     The 12 scale bytes hold sc[0..7] and m[0..7]: for j < 4 the low 6 bits of byte j are sc[j]
//     and of byte j + 4 m[j]; for j >= 4, sc[j] is the low nibble of byte j + 4 with the top two
//     bits of byte j - 4 above it, m[j] the high nibble of byte j + 4 with the top two bits of
//     byte j above it.
//   Q6_K (256 elements, 210 bytes): uint8 ql[128], uint8 qh[64], int8 scales[16], f16 d;
//     x = (d * scales[e / 16]) * (q - 32) with 6-bit q. Each half h (128 elements) uses
//     ql[64h ..], qh[32h ..]: for l < 32, elements l, l + 32, l + 64, l + 96 take the low nibble
//     of ql[l], the low nibble of ql[l + 32], the high nibble of ql[l], the high nibble of
//     ql[l + 32], and above it bits 0-1, 2-3, 4-5, 6-7 of qh[l].
#include <cstring>

#include "ember/error.h"
#include "ember/half.h"
#include "io/gguf_format.h"

namespace ember::io {

namespace {

float f16_at(const unsigned char* p) {
  return half_detail::half_to_float(static_cast<uint16_t>(p[0] | (p[1] << 8)));
}

float f32_at(const unsigned char* p) {
  uint32_t bits = static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                  (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K super-block.
void k_scale_min(const unsigned char* s, int j, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63;
    m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

void q8_0(const unsigned char* b, float* y) {
  const float d = f16_at(b);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

void q4_0(const unsigned char* b, float* y) {
  const float d = f16_at(b);
  const unsigned char* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>((qs[j] & 0x0f) - 8) * d;
    y[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

void q4_1(const unsigned char* b, float* y) {
  const float d = f16_at(b), m = f16_at(b + 2);
  const unsigned char* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>(qs[j] & 0x0f) * d + m;
    y[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

// Q4_K (qh null) and Q5_K (qh: the fifth bits).
void k_quants(const unsigned char* b, const unsigned char* qh, const unsigned char* qs, float* y) {
  const float d = f16_at(b), dmin = f16_at(b + 2);
  const unsigned char* scales = b + 4;
  for (int c = 0; c < 4; ++c, qs += 32, y += 64) {
    int sc, m;
    k_scale_min(scales, 2 * c, sc, m);
    const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
    k_scale_min(scales, 2 * c + 1, sc, m);
    const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
    const int lo_bit = 1 << (2 * c), hi_bit = 1 << (2 * c + 1);
    for (int l = 0; l < 32; ++l)
      y[l] = d1 * static_cast<float>((qs[l] & 0x0f) + (qh && (qh[l] & lo_bit) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l)
      y[32 + l] = d2 * static_cast<float>((qs[l] >> 4) + (qh && (qh[l] & hi_bit) ? 16 : 0)) - m2;
  }
}

void q4_k(const unsigned char* b, float* y) {
  k_quants(b, nullptr, b + 16, y);
}
void q5_k(const unsigned char* b, float* y) {
  k_quants(b, b + 16, b + 48, y);
}

void q6_k(const unsigned char* b, float* y) {
  const float d = f16_at(b + 208);
  for (int h = 0; h < 2; ++h, y += 128) {
    const unsigned char* ql = b + 64 * h;
    const unsigned char* qh = b + 128 + 32 * h;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192 + 8 * h);
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
  }
}

}  // namespace

namespace detail {

void gguf_dequantize_blocks(GgmlType type, const unsigned char* src, int64_t blocks, float* dst) {
  const GgmlBlock blk = ggml_block(type);
  switch (type) {
    case GgmlType::F32:
      for (int64_t i = 0; i < blocks; ++i) dst[i] = f32_at(src + 4 * i);
      return;
    case GgmlType::F16:
      for (int64_t i = 0; i < blocks; ++i) dst[i] = f16_at(src + 2 * i);
      return;
    case GgmlType::BF16:
      for (int64_t i = 0; i < blocks; ++i)
        dst[i] = half_detail::bfloat16_to_float(
            static_cast<uint16_t>(src[2 * i] | (src[2 * i + 1] << 8)));
      return;
    default:
      break;
  }
  struct Decoder {
    GgmlType type;
    void (*one)(const unsigned char*, float*);
  };
  static constexpr Decoder kDecoders[] = {{GgmlType::Q8_0, q8_0}, {GgmlType::Q4_0, q4_0},
                                          {GgmlType::Q4_1, q4_1}, {GgmlType::Q4_K, q4_k},
                                          {GgmlType::Q5_K, q5_k}, {GgmlType::Q6_K, q6_k}};
  void (*one)(const unsigned char*, float*) = nullptr;
  for (const Decoder& d : kDecoders)
    if (d.type == type) one = d.one;
  EMBER_CHECK(one, "[gguf_dequantize] ggml type ", static_cast<uint32_t>(type),
              " has no dequantization");
  for (int64_t i = 0; i < blocks; ++i) one(src + i * blk.bytes, dst + i * blk.elements);
}

}  // namespace detail

}  // namespace ember::io
