// tests/test_transformer.cpp: MultiheadAttention and the transformer layers (ember/nn/
// transformer.h) against PyTorch's outputs, attention weights and gradients
// (tests/reference/transformer_reference.txt, written by transformer_reference.py), loaded
// through strict state dicts so that names, order and shapes are PyTorch's; on every device, in
// float64. By hand: printing, initialization, the stacks' copies, dropout, the SDPA and
// explicit-weights paths agreeing, and the errors.
#include <cmath>

#include "case_fixtures.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::Fixture;
using testing::tensor_close;
using testing::throws_error;

class TransformerTest : public testing::DeviceTest {};

nn::TransformerLayerOptions layer_options(const Fixture& f) {
  return {.dim_feedforward = f.num("dim_feedforward", 2048),
          .dropout = 0.0,
          .activation = f.text("activation", "relu"),
          .batch_first = f.num("batch_first", 0) != 0,
          .norm_first = f.num("norm_first", 0) != 0};
}

std::shared_ptr<nn::Module> make_module(const Fixture& f) {
  const int64_t E = f.num("embed_dim", f.num("d_model", 0));
  const int64_t H = f.num("num_heads", f.num("nhead", 0));
  if (f.name.rfind("mha", 0) == 0)
    return nn::MultiheadAttention(E, H,
                                  {.bias = f.num("bias", 1) != 0,
                                   .add_bias_kv = f.num("add_bias_kv", 0) != 0,
                                   .add_zero_attn = f.num("add_zero_attn", 0) != 0,
                                   .kdim = f.num("kdim", 0),
                                   .vdim = f.num("vdim", 0),
                                   .batch_first = f.num("batch_first", 0) != 0})
        .ptr();
  if (f.name.rfind("encoder_layer", 0) == 0)
    return nn::TransformerEncoderLayer(E, H, layer_options(f)).ptr();
  if (f.name.rfind("decoder_layer", 0) == 0)
    return nn::TransformerDecoderLayer(E, H, layer_options(f)).ptr();
  if (f.name.rfind("encoder", 0) == 0)
    return nn::TransformerEncoder(nn::TransformerEncoderLayer(E, H, layer_options(f)),
                                  f.num("num_layers", 1), nn::LayerNorm(Shape{E}))
        .ptr();
  return nn::Transformer(
             nn::TransformerOptions{.d_model = E,
                                    .nhead = H,
                                    .num_encoder_layers = f.num("num_encoder_layers", 1),
                                    .num_decoder_layers = f.num("num_decoder_layers", 1),
                                    .layer = layer_options(f)})
      .ptr();
}

// The fixture's masks on `device`: bool.M as bool, float.M as float64; undefined when absent.
Tensor mask(const Fixture& f, const std::string& name, const Device& device) {
  if (f.has("bool." + name)) return f.get("bool." + name).to(kBool).to(device);
  if (f.has("float." + name)) return f.get("float." + name).to(device);
  return Tensor();
}

// Runs the fixture's module on its inputs -> (output, attention weights or undefined).
std::pair<Tensor, Tensor> run(const Fixture& f, nn::Module& m, std::map<std::string, Tensor>& in,
                              const Device& d) {
  if (auto* mha = dynamic_cast<nn::MultiheadAttentionImpl*>(&m)) {
    const Tensor& q = in["query"];
    const bool self = f.num("self_attention", 0) != 0;
    auto [out, w] = mha->forward(q, self ? q : in["key"], self ? q : in["value"],
                                 {.key_padding_mask = mask(f, "key_padding_mask", d),
                                  .need_weights = f.num("need_weights", 1) != 0,
                                  .attn_mask = mask(f, "attn_mask", d),
                                  .average_attn_weights = f.num("average_attn_weights", 1) != 0});
    return {out, w};
  }
  if (auto* enc = dynamic_cast<nn::TransformerEncoderLayerImpl*>(&m))
    return {enc->forward(in["src"], mask(f, "src_mask", d), mask(f, "src_key_padding_mask", d)),
            Tensor()};
  if (auto* dec = dynamic_cast<nn::TransformerDecoderLayerImpl*>(&m))
    return {dec->forward(in["tgt"], in["memory"], mask(f, "tgt_mask", d), mask(f, "memory_mask", d),
                         mask(f, "tgt_key_padding_mask", d), mask(f, "memory_key_padding_mask", d)),
            Tensor()};
  if (auto* stack = dynamic_cast<nn::TransformerEncoderImpl*>(&m))
    return {stack->forward(in["src"], mask(f, "src_mask", d)), Tensor()};
  auto& t = dynamic_cast<nn::TransformerImpl&>(m);
  Tensor padding = mask(f, "src_key_padding_mask", d);
  return {t.forward(in["src"], in["tgt"], Tensor(), mask(f, "tgt_mask", d), Tensor(), padding,
                    Tensor(), padding),
          Tensor()};
}

TEST_P(TransformerTest, MatchesPyTorch) {
  std::vector<Fixture> cases = testing::read_case_fixtures("transformer_reference.txt");
  ASSERT_GE(cases.size(), 11u);
  for (const Fixture& f : cases) {
    SCOPED_TRACE(f.name);
    std::shared_ptr<nn::Module> m = make_module(f);
    m->to(kFloat64);
    nn::StateDict state;
    for (const auto& [name, t] : f.tensors)
      if (name.rfind("param.", 0) == 0) state.emplace_back(name.substr(6), t);
    m->load_state_dict(state);  // strict: PyTorch's names and shapes
    m->to(device());
    m->eval();
    std::map<std::string, Tensor> in;
    for (const char* name : {"query", "key", "value", "src", "tgt", "memory"})
      if (f.has(name)) in[name] = f.get(name).to(device()).requires_grad_(true);
    auto [out, weights] = run(f, *m, in, device());
    EXPECT_TRUE(tensor_close(out, f.get("output"), 1e-7, 1e-8));
    Tensor loss = (out * f.get("w_out").to(device())).sum();
    if (f.has("weights")) {
      ASSERT_TRUE(weights.defined());
      EXPECT_TRUE(tensor_close(weights, f.get("weights"), 1e-7, 1e-8));
      loss = loss + (weights * f.get("w_weights").to(device())).sum();
    }
    loss.backward();
    for (auto& [name, t] : in)
      EXPECT_TRUE(tensor_close(t.grad(), f.get("grad." + name), 1e-6, 1e-7)) << name;
    for (const auto& [name, p] : m->named_parameters()) {
      SCOPED_TRACE(name);
      ASSERT_TRUE(p.grad().defined());
      EXPECT_TRUE(tensor_close(p.grad(), f.get("grad.param." + name), 1e-6, 1e-7));
    }
  }
}

// need_weights computes the weights explicitly, otherwise attention runs through SDPA: the
// outputs agree, with and without masks, and the causal hint gives the causal mask's result.
TEST_P(TransformerTest, AttentionPathsAgree) {
  manual_seed(3);
  nn::MultiheadAttention mha(8, 2);
  mha->to(device());
  Tensor x = randn({5, 3, 8}, on());
  Tensor causal = nn::generate_square_subsequent_mask(5).to(device());
  Tensor pad = zeros({3, 5}, on(kBool));
  pad.select(0, 1).narrow(0, 3, 2).fill_(true);
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    nn::MultiheadAttentionForwardOptions o;
    if (variant >= 1) o.attn_mask = causal;
    if (variant == 2) o.key_padding_mask = pad;
    Tensor explicit_weights = std::get<0>(mha(x, x, x, o));
    o.need_weights = false;
    EXPECT_TRUE(tensor_close(std::get<0>(mha(x, x, x, o)), explicit_weights, 1e-5, 1e-6));
    if (variant >= 1) {
      o.is_causal = true;
      EXPECT_TRUE(tensor_close(std::get<0>(mha(x, x, x, o)), explicit_weights, 1e-5, 1e-6));
    }
  }
}

TEST_P(TransformerTest, DropoutOnlyWhileTraining) {
  manual_seed(4);
  nn::TransformerEncoderLayer layer(8, 2, {.dim_feedforward = 16, .dropout = 0.5});
  layer->to(device());
  Tensor x = randn({4, 2, 8}, on());
  Tensor a = layer(x);
  Tensor b = layer(x);
  EXPECT_FALSE(tensor_close(a, b, 1e-3, 1e-3));
  layer->eval();
  EXPECT_TRUE(tensor_close(layer(x), layer(x), 0, 0));
}

TEST_P(TransformerTest, ErrorsSayWhatToDo) {
  EXPECT_TRUE(throws_error([] { nn::MultiheadAttention(10, 3); }, ErrorKind::Value,
                           {"[MultiheadAttention]", "divisible by num_heads"}));
  EXPECT_TRUE(throws_error([] { nn::TransformerEncoderLayer(8, 2, {.activation = "swish"}); },
                           ErrorKind::Value, {"relu/gelu", "swish"}));
  nn::MultiheadAttention mha(8, 2);
  mha->to(device());
  Tensor x = randn({5, 3, 8}, on());
  EXPECT_TRUE(throws_error([&] { mha(x, x, x, {.is_causal = true}); }, ErrorKind::Value,
                           {"Need attn_mask", "generate_square_subsequent_mask"}));
  EXPECT_TRUE(throws_error(
      [&] {
        mha(x, x, x, {.attn_mask = zeros({4, 5}, on())});
      },
      ErrorKind::Shape, {"2D attn_mask", "(5, 5)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        mha(x, x, x, {.key_padding_mask = zeros({5, 3}, on(kBool))});
      },
      ErrorKind::Shape, {"key_padding_mask of shape (3, 5)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        mha(randn({5, 3, 6}, on()), x, x);
      },
      ErrorKind::Shape, {"embedding dimension of 8", "[5, 3, 6]"}));
  nn::Transformer t(nn::TransformerOptions{
      .d_model = 8, .nhead = 2, .num_encoder_layers = 1, .num_decoder_layers = 1});
  t->to(device());
  EXPECT_TRUE(throws_error(
      [&] {
        t(randn({4, 2, 8}, on()), randn({3, 5, 8}, on()));
      },
      ErrorKind::Shape, {"batch number of src and tgt"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(TransformerTest);

TEST(TransformerModules, PrintAsPyTorch) {
  nn::MultiheadAttention mha(8, 2);
  EXPECT_EQ(mha->str(),
            "MultiheadAttention(\n"
            "  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
            "bias=True)\n"
            ")");
  nn::TransformerEncoderLayer layer(8, 2, {.dim_feedforward = 16});
  EXPECT_EQ(layer->str(),
            "TransformerEncoderLayer(\n"
            "  (self_attn): MultiheadAttention(\n"
            "    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
            "bias=True)\n"
            "  )\n"
            "  (linear1): Linear(in_features=8, out_features=16, bias=True)\n"
            "  (dropout): Dropout(p=0.1, inplace=False)\n"
            "  (linear2): Linear(in_features=16, out_features=8, bias=True)\n"
            "  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
            "  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
            "  (dropout1): Dropout(p=0.1, inplace=False)\n"
            "  (dropout2): Dropout(p=0.1, inplace=False)\n"
            ")");
}

TEST(TransformerModules, StateDictNamesAndInit) {
  manual_seed(5);
  nn::MultiheadAttention mha(8, 2, {.add_bias_kv = true, .kdim = 6});
  std::vector<std::string> names;
  for (const auto& [name, t] : mha->state_dict()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight",
                                             "in_proj_bias", "bias_k", "bias_v", "out_proj.weight",
                                             "out_proj.bias"}));
  EXPECT_EQ(mha->in_proj_bias.abs().sum().item<double>(), 0.0);
  EXPECT_EQ(mha->out_proj->bias.abs().sum().item<double>(), 0.0);
  // Xavier-uniform: |w| <= sqrt(6 / (fan_in + fan_out)).
  EXPECT_LE(mha->k_proj_weight.abs().max().item<double>(), std::sqrt(6.0 / 14));
  EXPECT_GT(mha->k_proj_weight.abs().max().item<double>(), 0.5 * std::sqrt(6.0 / 14));
  // The stack's layers start as copies of the layer it was given, and are trained apart.
  nn::TransformerEncoderLayer layer(8, 2, {.dim_feedforward = 16});
  nn::TransformerEncoder stack(layer, 3);
  ASSERT_EQ(stack->layers->size(), 3u);
  const auto state = stack->state_dict();
  EXPECT_EQ(state.front().first, "layers.0.self_attn.in_proj_weight");
  EXPECT_TRUE(tensor_close((*stack->layers)[2]->state_dict().front().second,
                           layer->self_attn->in_proj_weight, 0, 0));
  EXPECT_FALSE((*stack->layers)[0]->parameters().front().is_same(layer->self_attn->in_proj_weight));
  nn::Transformer t(nn::TransformerOptions{
      .d_model = 8, .nhead = 2, .num_encoder_layers = 1, .num_decoder_layers = 1});
  EXPECT_EQ(t->state_dict().back().first, "decoder.norm.bias");
}

TEST(TransformerModules, SquareSubsequentMask) {
  Tensor m = nn::generate_square_subsequent_mask(3);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(
      testing::tensor_equal(m, tensor({{0.0, -inf, -inf}, {0.0, 0.0, -inf}, {0.0, 0.0, 0.0}})));
  EXPECT_EQ(m.dtype(), kFloat32);
}

}  // namespace
}  // namespace ember
