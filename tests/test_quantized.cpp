// tests/test_quantized.cpp: weight-only quantization (ember/quantized.h) -- the int8 quantizer
// against torchao's formula on hand-picked values, ggml's Q8_0, Q4_0 and Q4_1 quantizers' error
// bounds and extreme codes, a GGUF file's Q8_0, Q4_0 and Q4_1 blocks dequantized to the file's
// reference values; then on each device: linear with a quantized weight against the float product
// with the dequantized weight (decoding rows and a prompt's, each input dtype, with bias and
// gradients), Linear and Embedding modules quantized (state_dict, clone, to(dtype), errors).
#include <cmath>

#include "ember/io/gguf.h"
#include "ember/io/safetensors.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;
namespace F = nn::functional;

std::string gguf_fixture(const std::string& name) {
  return std::string(EMBER_REFERENCE_DIR) + "/fixtures/gguf/" + name;
}

TEST(Quantized, Int8FollowsTorchaosWeightOnlyScheme) {
  // max |w| = 127.5: scale 1; halves round to even; 127.5 rounds to 128 and clamps to 127.
  const Tensor w = from_vector<float>({1, -2, 0.5f, 1.5f, 2.5f, 127.5f, -127.5f, 0}, Shape{1, 8});
  const QuantizedTensor q = QuantizedTensor::quantize(w);
  EXPECT_EQ(q.type(), QuantType::Int8);
  EXPECT_EQ(q.sizes(), (Shape{1, 8}));
  EXPECT_EQ(q.data().sizes(), (Shape{1, 12}));
  EXPECT_TRUE(tensor_equal(q.dequantize(),
                           from_vector<float>({1, -2, 0, 2, 2, 127, -128, 0}, Shape{1, 8})));
  // A row of zeros takes float32's epsilon as its scale and stays zero; rows scale alone.
  const Tensor w2 = from_vector<float>({0, 0, 0, 0, 2.55f, -1.275f, 0.01f, 0}, Shape{2, 4});
  const Tensor d2 = QuantizedTensor::quantize(w2).dequantize();
  EXPECT_TRUE(tensor_equal(d2.select(0, 0), zeros({4})));
  const float s = 2.55f / 127.5f;
  EXPECT_TRUE(tensor_close(d2.select(0, 1), from_vector<float>({127 * s, -64 * s, 0, 0}), 1e-6, 0));
}

TEST(Quantized, GgmlQuantizersKeepTheirErrorBounds) {
  manual_seed(3);
  const Tensor w = randn({5, 64});
  for (QuantType type : {QuantType::Q8_0, QuantType::Q4_0, QuantType::Q4_1}) {
    SCOPED_TRACE(quant_type_name(type));
    const QuantizedTensor q = QuantizedTensor::quantize(w, type);
    EXPECT_EQ(q.data().size(1), type == QuantType::Q8_0 ? 68 : type == QuantType::Q4_0 ? 36 : 40);
    const Tensor d = q.dequantize();
    const Tensor blocks = w.reshape({5, 2, 32}).abs().amax({2}, true);  // each block's max |w|
    // Q8_0: steps of max/127, errors of half a step; Q4_0: steps of max/8 over [-8, 7] steps,
    // so the side opposite the largest magnitude clamps a step short.
    // Q4_1: 15 steps over [min, max], at most twice the largest magnitude: half a step.
    const double bound = type == QuantType::Q8_0   ? 0.5 / 127
                         : type == QuantType::Q4_0 ? 1.0 / 8
                                                   : 1.0 / 15;
    const Tensor err = (d - w).reshape({5, 2, 32}).abs();
    EXPECT_TRUE((err <= blocks * bound * 1.002 + 1e-6).all().item<bool>());
    // The block's largest magnitude is a code's end: +-127 (Q8_0) or -8 (Q4_0), exact to the
    // float16 scale; Q4_1's minimum is its code 0.
    const Tensor at_max = (d.reshape({5, 2, 32}).abs().amax({2}, true) - blocks).abs();
    if (type != QuantType::Q4_1) {
      EXPECT_TRUE((at_max <= blocks * 1e-3).all().item<bool>());
    }
    const Tensor at_min =
        (d.reshape({5, 2, 32}).amin({2}, true) - w.reshape({5, 2, 32}).amin({2}, true)).abs();
    if (type == QuantType::Q4_1) {
      EXPECT_TRUE((at_min <= blocks * 1e-3).all().item<bool>());
    }
  }
  EXPECT_TRUE(throws_error(
      [] {
        QuantizedTensor::quantize(ones({2, 40}), QuantType::Q8_0);
      },
      ErrorKind::Shape, {"Q8_0", "blocks of 32", "40"}));
  EXPECT_TRUE(
      throws_error([] { QuantizedTensor::quantize(ones({40})); }, ErrorKind::Shape, {"2-D"}));
}

TEST(Quantized, GgufBlocksDequantizeToTheFilesValues) {
  const auto ref = io::load_safetensors(gguf_fixture("all_types_expected.safetensors")).tensors;
  const io::GgufFile kept =
      io::load_gguf(gguf_fixture("all_types_v3.gguf"), Device(kCPU), {.keep_quantized = true});
  int checked = 0;
  for (const io::GgufTensor& g : kept.quantized) {
    const std::optional<QuantizedTensor> kept_q = io::gguf_quantized_tensor(g);
    if (!kept_q) continue;
    SCOPED_TRACE(g.name);
    const QuantizedTensor& q = *kept_q;
    for (const auto& [name, t] : ref)
      if (name == g.name) {
        EXPECT_TRUE(tensor_equal(q.dequantize(), t));
        EXPECT_TRUE(tensor_equal(q.dequantize(kBFloat16), t.to(kBFloat16)));
        ++checked;
      }
  }
  EXPECT_EQ(checked, 3);
  EXPECT_TRUE(throws_error(
      [] {
        QuantizedTensor(QuantType::Q8_0, zeros({2, 33}, {.dtype = kUInt8}), 32);
      },
      ErrorKind::Shape, {"34 bytes", "[2, 33]"}));
  EXPECT_TRUE(throws_error(
      [] {
        QuantizedTensor(QuantType::Int8, zeros({2, 36}), 32);
      },
      ErrorKind::DType, {"uint8", "float32"}));
}

class QuantizedTest : public testing::DeviceTest {};

// linear(x, W quantized) against the float32 product with W dequantized: the same elements and
// float32 sums, in another order.
TEST_P(QuantizedTest, LinearIsTheProductWithTheDequantizedWeight) {
  manual_seed(4);
  for (QuantType type : {QuantType::Int8, QuantType::Q8_0, QuantType::Q4_0, QuantType::Q4_1}) {
    const QuantizedTensor w = QuantizedTensor::quantize(randn({37, 96}), type).to(device());
    const Tensor bias = randn({37}).to(device());
    const Tensor wd = w.dequantize();
    for (int64_t rows : {1, 3, 4, 9, 70}) {  // decoding steps and a prompt's rows
      SCOPED_TRACE(std::string(quant_type_name(type)) + ", rows " + std::to_string(rows));
      const Tensor x = randn({rows, 96}).to(device());
      EXPECT_TRUE(tensor_close(F::linear(x, w), F::linear(x, wd), 1e-5, 1e-5));
      EXPECT_TRUE(tensor_close(F::linear(x, w, bias), F::linear(x, wd, bias), 1e-5, 1e-5));
      for (DType half : {kBFloat16, kFloat16}) {  // 16-bit input: float32 products, one rounding
        const Tensor x3 = x.reshape({1, rows, 96}).to(half);
        const Tensor y3 = F::linear(x3, w, bias);
        EXPECT_EQ(y3.dtype(), half);
        EXPECT_EQ(y3.sizes(), (Shape{1, rows, 37}));
        EXPECT_TRUE(tensor_close(y3.to(kFloat32),
                                 F::linear(x3.to(kFloat32), wd, bias).to(half).to(kFloat32), 1e-2,
                                 1e-2));
      }
    }
  }
}

TEST_P(QuantizedTest, LinearGradientsReachTheInputAndBias) {
  manual_seed(5);
  const QuantizedTensor w = QuantizedTensor::quantize(randn({6, 40})).to(device());
  const Tensor x = randn({3, 40}).to(device()).requires_grad_();
  const Tensor bias = randn({6}).to(device()).requires_grad_();
  const Tensor g = randn({3, 6}).to(device());
  (F::linear(x, w, bias) * g).sum().backward();
  EXPECT_TRUE(tensor_close(x.grad(), g.mm(w.dequantize()), 1e-5, 1e-5));
  EXPECT_TRUE(tensor_close(bias.grad(), g.sum({0}), 1e-5, 1e-5));
}

TEST_P(QuantizedTest, LinearModuleQuantizesItsWeight) {
  manual_seed(6);
  nn::Linear layer(64, 5);
  layer->to(device());
  const Tensor x = randn({2, 64}).to(device());
  const Tensor before = layer(x);
  const Tensor w = layer->weight.detach().clone();
  layer->quantize_weight();
  EXPECT_FALSE(layer->weight.defined());
  const auto params = layer->named_parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].first, "bias");
  const auto state = layer->state_dict();
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[1].first, "weight_quantized");
  EXPECT_EQ(state[1].second.dtype(), kUInt8);
  EXPECT_NE(layer->str().find("weight=int8"), std::string::npos);
  const Tensor after = layer(x);
  EXPECT_TRUE(tensor_close(after, F::linear(x, QuantizedTensor::quantize(w), layer->bias)));
  EXPECT_TRUE(tensor_close(after, before, 0.05, 0.05));  // int8 of a random layer: ~1 % off
  // to(dtype) leaves the stored bytes; the output follows the input's dtype.
  layer->to(kBFloat16);
  EXPECT_EQ(layer->weight_quantized.data().dtype(), kUInt8);
  EXPECT_EQ(layer(x.to(kBFloat16)).dtype(), kBFloat16);
  // A clone has its own bytes, equal to these.
  auto copy = std::dynamic_pointer_cast<nn::LinearImpl>(layer->clone());
  ASSERT_TRUE(copy && copy->weight_quantized.defined());
  EXPECT_NE(copy->weight_quantized.data().impl().storage,
            layer->weight_quantized.data().impl().storage);
  EXPECT_TRUE(tensor_equal(copy->weight_quantized.data(), layer->weight_quantized.data()));
  EXPECT_TRUE(throws_error([&] { layer(x.to(kFloat64)); }, ErrorKind::DType,
                           {"[linear]", "float64", "to(ember::kFloat32)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        layer(randn({2, 63}).to(device()).to(kBFloat16));
      },
      ErrorKind::Shape, {"in_features=64", "63"}));
  nn::Linear other(32, 5);
  EXPECT_TRUE(throws_error(
      [&] {
        other->set_quantized_weight(QuantizedTensor::quantize(randn({5, 64})));
      },
      ErrorKind::Shape, {"[5, 64]", "in_features=32"}));
}

TEST_P(QuantizedTest, EmbeddingLooksUpQuantizedRows) {
  manual_seed(7);
  nn::Embedding table(10, 32);
  table->to(device(), kBFloat16);
  const Tensor ids = from_vector<int64_t>({3, 0, 9, 3}, Shape{2, 2}).to(device());
  const Tensor w = table->weight.detach().clone();
  table->quantize_weight(QuantType::Q8_0);
  const Tensor rows = table(ids);
  EXPECT_EQ(rows.dtype(), kBFloat16);
  EXPECT_EQ(rows.sizes(), (Shape{2, 2, 32}));
  const Tensor want = QuantizedTensor::quantize(w, QuantType::Q8_0).dequantize(kBFloat16);
  EXPECT_TRUE(tensor_equal(rows, want.index_select(0, ids.reshape({-1})).view({2, 2, 32})));
  EXPECT_TRUE(tensor_close(rows.to(kFloat32),
                           w.index_select(0, ids.reshape({-1})).view({2, 2, 32}).to(kFloat32), 0.03,
                           0.03));
}

EMBER_INSTANTIATE_DEVICE_TESTS(QuantizedTest);

}  // namespace
}  // namespace ember
