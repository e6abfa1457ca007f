// tests/test_gpt2.cpp: GPT2LMHeadModel against transformers -- the tiny GPT-2 folder of
// tests/reference/fixtures/gpt2 and what transformers 5.25 computed with it (gpt2_reference.py):
// logits, greedy continuations alone and in a left-padded batch -- and by hand: the cache against
// full recomputation, the Conv1D layout, the position limit, config and weight checks.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ember/io/gguf.h"
#include "ember/io/hf_weights.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::read_text;
using testing::tensor_close;
using testing::throws_error;

const std::string kDir = std::string(EMBER_REFERENCE_DIR) + "/fixtures/gpt2/";

nlohmann::json reference() {
  return nlohmann::json::parse(read_text(kDir + "expected.json"));
}

nn::GPT2LMHeadModel load(Device device) {
  const nn::GPT2Config cfg = nn::GPT2Config::from_json(read_text(kDir + "tiny_gpt2/config.json"));
  const auto weights = io::load_hf_weights(kDir + "tiny_gpt2");
  cfg.check_weights(weights.tensors, "model.safetensors");
  nn::GPT2LMHeadModel model(cfg);
  model->to(device);
  model->load_hf_state_dict(weights.tensors);
  model->eval();
  return model;
}

class Gpt2Test : public testing::DeviceTest {};

TEST_P(Gpt2Test, LogitsMatchTransformers) {
  const auto ref = reference();
  auto model = load(device());
  NoGradGuard no_grad;
  const auto ids = ref["prompt"].get<std::vector<int64_t>>();
  const Tensor logits =
      model(from_vector(ids, Shape{1, static_cast<int64_t>(ids.size())}).to(device())).select(0, 0);
  const auto positions = ref["positions"].get<std::vector<int64_t>>();
  const Tensor picked = logits.index_select(
      0, from_vector(positions, Shape{static_cast<int64_t>(positions.size())}).to(device()));
  std::vector<float> want;
  for (const auto& row : ref["logits"])
    for (const auto& v : row) want.push_back(v.get<float>());
  const Tensor expected = from_vector(want, picked.sizes());
  // float32, transformers summing in another order (seen: below 1e-5 of the logits' scale).
  const double scale = expected.abs().max().item<float>();
  EXPECT_TRUE(tensor_close(picked.to(kCPU), expected, 1e-5, 1e-5 * scale));
}

TEST_P(Gpt2Test, GreedyContinuationsMatchTransformers) {
  const auto ref = reference();
  auto model = load(device());
  nn::GenerationConfig g;
  g.max_new_tokens = 10;
  g.pad_token_id = 0;
  const auto one = nn::generate(*model, {ref["greedy_prompt"].get<std::vector<int64_t>>()}, g);
  EXPECT_EQ(one.tokens[0], ref["greedy"].get<std::vector<int64_t>>());
  const auto batch =
      nn::generate(*model, ref["batch_prompts"].get<std::vector<std::vector<int64_t>>>(), g);
  EXPECT_EQ(batch.tokens, ref["batch_greedy"].get<std::vector<std::vector<int64_t>>>());
}

TEST_P(Gpt2Test, CachedStepsEqualFullRecomputation) {
  auto model = load(device());
  NoGradGuard no_grad;
  const auto ids = reference()["prompt"].get<std::vector<int64_t>>();
  const Tensor all = from_vector(ids, Shape{1, 12}).to(device());
  const Tensor full = model(all);
  nn::KvCache cache = model->new_cache(1, 12);
  std::vector<Tensor> parts = {model(all.narrow(1, 0, 5), &cache),
                               model(all.narrow(1, 5, 3), &cache)};
  for (int64_t i = 8; i < 12; ++i) parts.push_back(model(all.narrow(1, i, 1), &cache));
  EXPECT_TRUE(tensor_close(cat(parts, 1), full, 1e-5, 1e-5));
  cache.reset();
  EXPECT_TRUE(tensor_close(model(all, &cache, Tensor(), 1), full.narrow(1, 11, 1), 1e-5, 1e-5));
  // The Conv1D weights keep transformers' (in, out) shape over a Linear's (out, in) rows.
  const Tensor& w = model->transformer->h[0]->attn->c_attn->weight;
  EXPECT_EQ(w.sizes(), (Shape{32, 96}));
  EXPECT_TRUE(w.t().is_contiguous());
  // 64 positions at most.
  const Tensor long_ids = zeros({1, 65}, {.dtype = kInt64, .device = device()});
  EXPECT_TRUE(throws_error([&] { model(long_ids); }, ErrorKind::Index,
                           {"[GPT2LMHeadModel]", "65 positions", "n_positions (64)"}));
}

// tiny_gpt2.gguf (the folder's model as llama.cpp's converter writes a GPT-2: Conv1D weights as
// (out, in) rows, an output.weight equal to the embedding) computes what the folder does.
TEST_P(Gpt2Test, GgufFileRunsAsItsFolder) {
  const auto ref = reference();
  io::GgufFile file = io::load_gguf(kDir + "tiny_gpt2.gguf", device());
  const io::GgufHfGpt2 hf = io::gguf_to_hf_gpt2(file);
  EXPECT_EQ(hf.config.vocab_size, 702);
  EXPECT_EQ(hf.config.n_layer, 2);
  EXPECT_EQ(hf.config.n_inner, 128);
  nn::GPT2Config cfg = nn::GPT2Config::from_json(read_text(kDir + "tiny_gpt2/config.json"));
  cfg.check_weights(hf.tensors, "tiny_gpt2.gguf");
  nn::GPT2LMHeadModel model(cfg);
  model->to(device());
  model->load_hf_state_dict(hf.tensors);
  model->eval();
  auto folder = load(device());
  const auto prompt = ref["prompt"].get<std::vector<int64_t>>();
  const Tensor ids =
      from_vector(prompt, Shape{1, static_cast<int64_t>(prompt.size())}).to(device());
  {
    NoGradGuard no_grad;
    EXPECT_TRUE(tensor_close(model(ids), folder(ids), 1e-6, 1e-6));
  }
  nn::GenerationConfig g;
  g.max_new_tokens = 10;
  EXPECT_EQ(nn::generate(*model, {ref["greedy_prompt"].get<std::vector<int64_t>>()}, g).tokens[0],
            ref["greedy"].get<std::vector<int64_t>>());
  // Hyperparameters out of range, an output.weight other than the embedding, or a name GPT-2 has
  // not, are refused.
  file.metadata["gpt2.attention.head_count"] = io::GgufValue(uint32_t{0});
  EXPECT_TRUE(throws_error([&] { io::gguf_to_hf_gpt2(file); }, ErrorKind::Value,
                           {"gpt2.attention.head_count", "is 0"}));
  file.metadata["gpt2.attention.head_count"] = io::GgufValue(uint32_t{3});
  EXPECT_TRUE(throws_error([&] { io::gguf_to_hf_gpt2(file); }, ErrorKind::Value,
                           {"not a multiple", "head_count 3"}));
  file.metadata["gpt2.attention.head_count"] = io::GgufValue(uint32_t{4});
  for (auto& [name, t] : file.tensors)
    if (name == "output.weight") t = t * 2;
  EXPECT_TRUE(throws_error([&] { io::gguf_to_hf_gpt2(file); }, ErrorKind::Value,
                           {"output.weight", "ties"}));
  file.tensors.emplace_back("blk.0.attn_q.weight", zeros({2, 2}));
  EXPECT_TRUE(throws_error([&] { io::gguf_to_hf_gpt2(file); }, ErrorKind::Value,
                           {"blk.0.attn_q.weight", "GPT-2"}));
  file.metadata["general.architecture"] = io::GgufValue("llama");
  EXPECT_TRUE(throws_error([&] { io::gguf_to_hf_gpt2(file); }, ErrorKind::Value,
                           {"general.architecture", "'llama'", "'gpt2'"}));
}

// Weight-only quantization: the quantized model computes what the float model computes with each
// Conv1D and the embedding replaced by their dequantized values (the position table stays).
TEST_P(Gpt2Test, QuantizedModelComputesWithItsDequantizedWeights) {
  auto quant = load(device());
  auto plain = load(device());
  quant->quantize(QuantType::Int8);
  {
    NoGradGuard no_grad;
    for (const auto& m : plain->modules()) {
      if (auto* c = dynamic_cast<nn::Conv1DImpl*>(m.get()))
        c->weight.t().copy_(QuantizedTensor::quantize(c->weight.t()).dequantize());
      if (m.get() == &*plain->transformer->wte) {
        Tensor w = plain->transformer->wte->weight;
        w.copy_(QuantizedTensor::quantize(w).dequantize());
      }
    }
  }
  EXPECT_FALSE(quant->transformer->h[0]->attn->c_attn->weight.defined());
  EXPECT_TRUE(quant->transformer->h[0]->mlp->c_fc->weight_quantized.defined());
  const Tensor input = from_vector<int64_t>({5, 17, 3, 40, 2, 9}, Shape{1, 6}).to(device());
  NoGradGuard no_grad;
  EXPECT_TRUE(tensor_close(quant(input), plain(input), 1e-5, 1e-5));
  EXPECT_TRUE(tensor_close(quant(input.narrow(1, 0, 1)), plain(input.narrow(1, 0, 1)), 1e-5, 1e-5));
}

EMBER_INSTANTIATE_DEVICE_TESTS(Gpt2Test);

TEST(Gpt2Config, FieldsAreReadAndChecked) {
  const std::string text = read_text(kDir + "tiny_gpt2/config.json");
  const auto c = nn::GPT2Config::from_json(text);
  EXPECT_EQ(c.n_inner, 128);  // null: 4 * n_embd
  EXPECT_EQ(c.n_positions, 64);
  EXPECT_EQ(c.eos_token_ids, std::vector<int64_t>{0});
  auto edited = [&](const char* key, const nlohmann::json& value) {
    auto j = nlohmann::json::parse(text);
    j[key] = value;
    return j.dump();
  };
  EXPECT_TRUE(throws_error([&] { nn::GPT2Config::from_json(edited("model_type", "llama")); },
                           ErrorKind::Value, {"model_type", "'llama'", "LlamaForCausalLM"}));
  EXPECT_TRUE(
      throws_error([&] { nn::GPT2Config::from_json(edited("activation_function", "swish")); },
                   ErrorKind::Value, {"activation_function", "'swish'", "gelu_new"}));
  EXPECT_TRUE(throws_error([&] { nn::GPT2Config::from_json(edited("n_head", 5)); },
                           ErrorKind::Value, {"n_embd", "multiple of \"n_head\" 5"}));
  EXPECT_TRUE(
      throws_error([&] { nn::GPT2Config::from_json(edited("reorder_and_upcast_attn", true)); },
                   ErrorKind::Value, {"reorder_and_upcast_attn"}));
  const auto weights = io::load_hf_weights(kDir + "tiny_gpt2").tensors;
  const auto wrong = nn::GPT2Config::from_json(edited("n_layer", 3));
  EXPECT_TRUE(throws_error([&] { wrong.check_weights(weights, "model.safetensors"); },
                           ErrorKind::Value, {"\"n_layer\" is 3", "2 layers"}));
}

}  // namespace
}  // namespace ember
