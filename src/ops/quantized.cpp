// ops/quantized.cpp: QuantizedTensor (ember/quantized.h) -- the three quantizers, checks of stored
// rows, views and copies of rows -- and the functional forms that compute with one: linear through
// the backend's quantized_matmul, embedding through dequantize of the rows it picks.
#include "ember/quantized.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "autograd/function.h"
#include "core/backend.h"
#include "core/make_tensor.h"
#include "ember/creation.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "kernels/quant_blocks.h"

namespace ember {

namespace {

kernels::QuantKind kind_of(QuantType type) {
  switch (type) {
    case QuantType::Int8:
      return kernels::QuantKind::Int8;
    case QuantType::Q8_0:
      return kernels::QuantKind::Q8_0;
    case QuantType::Q4_0:
      return kernels::QuantKind::Q4_0;
    default:
      return kernels::QuantKind::Q4_1;
  }
}

void put_f16(unsigned char* p, float v) {
  const uint16_t h = half_detail::half_from_float(v);
  p[0] = static_cast<unsigned char>(h & 0xff);
  p[1] = static_cast<unsigned char>(h >> 8);
}

// torchao's int8 weight-only quantization of one row: symmetric, per row.
void quantize_row_int8(const float* x, int64_t n, unsigned char* out) {
  float amax = 0;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float scale = std::max(amax / 127.5f, std::numeric_limits<float>::epsilon());
  std::memcpy(out, &scale, 4);
  const float inv = 1.0f / scale;
  for (int64_t i = 0; i < n; ++i) {
    const float q = std::clamp(std::nearbyint(x[i] * inv), -128.0f, 127.0f);
    out[4 + i] = static_cast<unsigned char>(static_cast<int8_t>(q));
  }
}

// ggml's reference Q8_0: d = max|x| / 127, q = round(x / d) (half away from zero).
void quantize_block_q8_0(const float* x, unsigned char* out) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
  put_f16(out, d);
  for (int j = 0; j < 32; ++j)
    out[2 + j] = static_cast<unsigned char>(static_cast<int8_t>(std::round(x[j] * id)));
}

// ggml's reference Q4_0: d = (the element of largest magnitude) / -8, q = min(15, x / d + 8.5)
// truncated.
void quantize_block_q4_0(const float* x, unsigned char* out) {
  float amax = 0, max = 0;
  for (int j = 0; j < 32; ++j)
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  const float d = max / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
  put_f16(out, d);
  for (int j = 0; j < 16; ++j) {
    const auto q0 = std::min<int>(15, static_cast<int8_t>(x[j] * id + 8.5f));
    const auto q1 = std::min<int>(15, static_cast<int8_t>(x[j + 16] * id + 8.5f));
    out[2 + j] = static_cast<unsigned char>(q0 | (q1 << 4));
  }
}

// ggml's reference Q4_1: d = (max - min) / 15, m = min, q = min(15, (x - min) / d + 0.5)
// truncated.
void quantize_block_q4_1(const float* x, unsigned char* out) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < 32; ++j) {
    lo = std::min(lo, x[j]);
    hi = std::max(hi, x[j]);
  }
  const float d = (hi - lo) / 15.0f, id = d != 0 ? 1.0f / d : 0.0f;
  put_f16(out, d);
  put_f16(out + 2, lo);
  for (int j = 0; j < 16; ++j) {
    const auto q0 = std::min<int>(15, static_cast<int8_t>((x[j] - lo) * id + 0.5f));
    const auto q1 = std::min<int>(15, static_cast<int8_t>((x[j + 16] - lo) * id + 0.5f));
    out[4 + j] = static_cast<unsigned char>(q0 | (q1 << 4));
  }
}

}  // namespace

const char* quant_type_name(QuantType type) {
  switch (type) {
    case QuantType::Int8:
      return "int8";
    case QuantType::Q8_0:
      return "Q8_0";
    case QuantType::Q4_0:
      return "Q4_0";
    default:
      return "Q4_1";
  }
}

int64_t QuantizedTensor::row_bytes(QuantType type, int64_t cols) {
  return kernels::quant_row_bytes(kind_of(type), cols);
}

QuantizedTensor::QuantizedTensor(QuantType type, Tensor data, int64_t cols)
    : type_(type), data_(std::move(data)), cols_(cols) {
  EMBER_CHECK_KIND(Shape, cols >= 0 && (type == QuantType::Int8 || cols % 32 == 0),
                   "[QuantizedTensor] a ", quant_type_name(type),
                   " row holds blocks of 32 elements; got ", cols, " columns");
  EMBER_CHECK_KIND(DType, data_.defined() && data_.dtype() == kUInt8,
                   "[QuantizedTensor] the stored rows must be a uint8 tensor, got ",
                   data_.defined() ? dtype_name(data_.dtype()) : "an undefined tensor");
  EMBER_CHECK_KIND(Shape, data_.dim() == 2 && data_.size(1) == row_bytes(type, cols),
                   "[QuantizedTensor] ", quant_type_name(type), " rows of ", cols, " elements are ",
                   row_bytes(type, cols), " bytes each: data must be (rows, ",
                   row_bytes(type, cols), "), got ", shape_str(data_.sizes()));
}

QuantizedTensor QuantizedTensor::quantize(const Tensor& weight, QuantType type) {
  EMBER_CHECK_KIND(Shape, weight.dim() == 2, "[QuantizedTensor::quantize] takes a 2-D weight, got ",
                   shape_str(weight.sizes()));
  EMBER_CHECK_KIND(DType, weight.is_floating_point(),
                   "[QuantizedTensor::quantize] takes a floating weight, got ",
                   dtype_name(weight.dtype()));
  const int64_t rows = weight.size(0), cols = weight.size(1);
  EMBER_CHECK_KIND(Shape, type == QuantType::Int8 || cols % 32 == 0, "[QuantizedTensor::quantize] ",
                   quant_type_name(type), " stores blocks of 32 along a row; a row of ", cols,
                   " elements does not split into them (int8 takes any length)");
  NoGradGuard no_grad;
  const Tensor w = weight.to(Device(kCPU), kFloat32).contiguous();
  const int64_t rb = row_bytes(type, cols);
  Tensor data = empty({rows, rb}, {.dtype = kUInt8});
  const float* src = w.data_ptr<float>();
  auto* dst = static_cast<unsigned char*>(data.raw_data_ptr());
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = src + r * cols;
    unsigned char* out = dst + r * rb;
    if (type == QuantType::Int8) {
      quantize_row_int8(x, cols, out);
    } else {
      for (int64_t b = 0; b < cols / 32; ++b) {
        if (type == QuantType::Q8_0)
          quantize_block_q8_0(x + 32 * b, out + 34 * b);
        else if (type == QuantType::Q4_0)
          quantize_block_q4_0(x + 32 * b, out + 18 * b);
        else
          quantize_block_q4_1(x + 32 * b, out + 20 * b);
      }
    }
  }
  return QuantizedTensor(type, data.to(weight.device()), cols);
}

Tensor QuantizedTensor::dequantize(DType dtype) const {
  EMBER_CHECK(defined(), "[QuantizedTensor::dequantize] the tensor is undefined");
  EMBER_CHECK_KIND(DType, dtype == kFloat32 || dtype == kBFloat16 || dtype == kFloat16,
                   "[QuantizedTensor::dequantize] gives float32, bfloat16 or float16, not ",
                   dtype_name(dtype));
  const Tensor bytes = data_.contiguous();
  Tensor out = make_tensor({rows(), cols_}, dtype, device());
  if (out.numel() > 0)
    backend_for(device().type()).dequantize(kind_of(type_), view_of(out), view_of(bytes));
  return out;
}

QuantizedTensor QuantizedTensor::narrow(int64_t start, int64_t length) const {
  return QuantizedTensor(type_, data_.narrow(0, start, length), cols_);
}

QuantizedTensor QuantizedTensor::index_select(const Tensor& index) const {
  return QuantizedTensor(type_, data_.index_select(0, index.reshape({-1})), cols_);
}

QuantizedTensor QuantizedTensor::to(Device device) const {
  return QuantizedTensor(type_, data_.to(device), cols_);
}

namespace nn::functional {

Tensor linear(const Tensor& x, const QuantizedTensor& weight, const Tensor& bias) {
  EMBER_CHECK(weight.defined(), "[linear] the quantized weight is undefined");
  EMBER_CHECK_KIND(DType, x.dtype() == kFloat32 || x.dtype() == kBFloat16 || x.dtype() == kFloat16,
                   "[linear] a quantized weight multiplies float32, bfloat16 or float16 input, "
                   "got ",
                   dtype_name(x.dtype()), "; convert the input with .to(ember::kFloat32)");
  EMBER_CHECK_KIND(Shape, x.dim() >= 1 && x.size(-1) == weight.cols(),
                   "[linear] mat1 and mat2 shapes cannot be multiplied: input of shape ",
                   shape_str(x.sizes()), " against a ", quant_type_name(weight.type()),
                   " weight of shape ", shape_str(weight.sizes()));
  EMBER_CHECK_KIND(Shape, !bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.rows()),
                   "[linear] bias must be (", weight.rows(), "), got ",
                   bias.defined() ? shape_str(bias.sizes()) : std::string());
  EMBER_CHECK_KIND(
      Device, x.device() == weight.device() && (!bias.defined() || bias.device() == x.device()),
      "[linear] expected the input, the quantized weight and the bias on one device, "
      "got ",
      x.device().str(), " and ", weight.device().str(),
      bias.defined() ? " and " + bias.device().str() : std::string());
  Shape out_shape = x.sizes();
  out_shape.back() = weight.rows();
  Tensor y;
  {
    NoGradGuard no_grad;
    const Tensor x2 = x.reshape({-1, weight.cols()}).to(kFloat32).contiguous();
    const Tensor bytes = weight.data().contiguous();
    y = make_tensor({x2.size(0), weight.rows()}, kFloat32, x.device());
    if (y.numel() > 0)
      backend_for(x.device().type())
          .quantized_matmul(kind_of(weight.type()), view_of(y), view_of(x2), view_of(bytes));
    if (bias.defined()) y.add_(bias.to(kFloat32));
    y = y.to(x.dtype()).view(out_shape);
  }
  auto backward = [weight, x_shape = x.sizes(), x_dtype = x.dtype(), x_grad = x.requires_grad(),
                   b_grad = bias.defined() && bias.requires_grad()](const Tensor& g) {
    const Tensor g2 = g.reshape({-1, weight.rows()});
    return std::vector<Tensor>{
        x_grad ? mm(g2.to(kFloat32), weight.dequantize(kFloat32)).to(x_dtype).view(x_shape)
               : Tensor(),
        b_grad ? sum(g2, {0}) : Tensor()};
  };
  if (bias.defined())
    autograd::record("QuantizedLinearBackward", {&x, &bias}, y, std::move(backward));
  else
    autograd::record("QuantizedLinearBackward", {&x}, y,
                     [backward = std::move(backward)](const Tensor& g) {
                       return std::vector<Tensor>{backward(g)[0]};
                     });
  return y;
}

Tensor embedding(const Tensor& indices, const QuantizedTensor& weight, DType dtype) {
  EMBER_CHECK_KIND(DType, indices.dtype() == kInt64 || indices.dtype() == kInt32,
                   "[embedding] indices must be int64 or int32, got ", dtype_name(indices.dtype()));
  Shape out_shape = indices.sizes();
  out_shape.push_back(weight.cols());
  const Tensor rows = indices.to(weight.device(), kInt64);
  return weight.index_select(rows).dequantize(dtype).view(out_shape);
}

}  // namespace nn::functional

}  // namespace ember
