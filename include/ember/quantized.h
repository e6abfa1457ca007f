// ember/quantized.h: weight matrices stored quantized, and the products that read them where they
// lie (weight-only quantization: inputs and outputs keep their floating dtype, products accumulate
// in float32). Three row formats (the bytes are kernels/quant_blocks.h's):
//   - QuantType::Int8: int8 values with one float32 scale per row -- torchao's int8 weight-only
//     scheme: symmetric, scale = max|row| / 127.5 (at least float32's epsilon), values
//     round(w / scale) (half to even) clamped to [-128, 127];
//   - QuantType::Q8_0, Q4_0 and Q4_1: ggml's blocks of 32 with a float16 scale each (and a float16
//     minimum, Q4_1), byte for byte as a GGUF file holds them (quantize() follows ggml's reference
//     quantizers).
// nn::LinearImpl::quantize_weight and nn::EmbeddingImpl::quantize_weight put one in a layer.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "ember/tensor.h"

namespace ember {

enum class QuantType { Int8, Q8_0, Q4_0, Q4_1 };

// "int8", "Q8_0", "Q4_0", "Q4_1".
const char* quant_type_name(QuantType type);

// A (rows, cols) matrix stored quantized, row by row -- a Linear's weight is (out_features,
// in_features), an Embedding's (num_embeddings, embedding_dim).
class QuantizedTensor {
 public:
  QuantizedTensor() = default;
  // Rows already stored: data (rows, row_bytes(type, cols)) uint8, e.g. a GGUF file's Q8_0 blocks
  // of each row. Throws when the sizes disagree (the block types need cols a multiple of 32).
  QuantizedTensor(QuantType type, Tensor data, int64_t cols);
  // weight (rows, cols), floating, quantized row by row on its device (the arithmetic runs on the
  // CPU; the result goes back to weight's device).
  static QuantizedTensor quantize(const Tensor& weight, QuantType type = QuantType::Int8);
  // Bytes of one stored row.
  static int64_t row_bytes(QuantType type, int64_t cols);

  bool defined() const { return data_.defined(); }
  QuantType type() const { return type_; }
  int64_t rows() const { return data_.defined() ? data_.size(0) : 0; }
  int64_t cols() const { return cols_; }
  Shape sizes() const { return {rows(), cols_}; }
  Device device() const { return data_.device(); }
  // The stored rows (uint8, (rows, row_bytes)).
  const Tensor& data() const { return data_; }
  size_t nbytes() const { return data_.defined() ? data_.nbytes() : 0; }

  // (rows, cols) in dtype (float32, bfloat16 or float16), on the same device.
  Tensor dequantize(DType dtype = kFloat32) const;
  // Rows [start, start + length), a view of the same bytes.
  QuantizedTensor narrow(int64_t start, int64_t length) const;
  // The rows at `index` (int64, any shape, flattened), copied.
  QuantizedTensor index_select(const Tensor& index) const;
  QuantizedTensor to(Device device) const;
  // For EMBER_CLONE and modules holding one.
  auto members() { return std::tie(data_); }

 private:
  QuantType type_ = QuantType::Int8;
  Tensor data_;
  int64_t cols_ = 0;
};

namespace nn::functional {

// x (..., in) @ weight^T + bias -> (..., out) in x's dtype (float32, bfloat16 or float16), the
// products in float32; weight (out, in) quantized, bias (out) or undefined. The gradient reaches x
// (through weight dequantized) and bias; a quantized weight has none.
Tensor linear(const Tensor& x, const QuantizedTensor& weight, const Tensor& bias = Tensor());

// The rows of weight at indices (int64, any shape) -> (indices..., cols) in dtype.
Tensor embedding(const Tensor& indices, const QuantizedTensor& weight, DType dtype);

}  // namespace nn::functional

}  // namespace ember
