// tests/test_llama.cpp: LlamaForCausalLM and generate() against transformers -- the tiny Llama
// (grouped-query attention, head_dim apart from hidden / heads, llama3 rope scaling) and Qwen2
// (biases, one key/value head, tied embeddings, bfloat16 weights) folders of
// tests/reference/fixtures/llama and what transformers 4.46 computed with them
// (llama_reference.py): logits with each rope scaling kind, in float32 and bfloat16, greedy
// continuations alone and in a left-padded batch -- and by hand: the cache against full
// recomputation, the logits processors, config and weight checks.
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ember/data/bpe.h"
#include "ember/io/gguf.h"
#include "ember/io/hf_weights.h"
#include "ember/io/safetensors.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::read_text;
using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;

const std::string kDir = std::string(EMBER_REFERENCE_DIR) + "/fixtures/llama/";

nlohmann::json reference() {
  return nlohmann::json::parse(read_text(kDir + "expected.json"));
}

const nlohmann::json& find_case(const nlohmann::json& ref, const std::string& name) {
  for (const auto& c : ref["cases"])
    if (c["name"] == name) return c;
  throw std::runtime_error("no case " + name);
}

// The case's model: its folder's config.json with the case's fields changed, its weights, the
// dtype transformers computed in.
nn::LlamaForCausalLM load_case(const nlohmann::json& c, Device device) {
  nlohmann::json config =
      nlohmann::json::parse(read_text(kDir + c["folder"].get<std::string>() + "/config.json"));
  for (const auto& [key, value] : c["config"].items()) config[key] = value;
  nn::LlamaConfig cfg = nn::LlamaConfig::from_json(config.dump());
  auto weights = io::load_hf_weights(kDir + c["folder"].get<std::string>());
  cfg.check_weights(weights.tensors, "model.safetensors");
  nn::LlamaForCausalLM model(cfg);
  model->to(device, c["dtype"] == "bfloat16" ? kBFloat16 : kFloat32);
  model->load_hf_state_dict(weights.tensors);
  model->eval();
  return model;
}

std::vector<std::vector<int64_t>> unpad(const nlohmann::json& ids, const nlohmann::json& mask) {
  std::vector<std::vector<int64_t>> out;
  for (size_t b = 0; b < ids.size(); ++b) {
    out.emplace_back();
    for (size_t i = 0; i < ids[b].size(); ++i)
      if (mask[b][i] == 1) out.back().push_back(ids[b][i]);
  }
  return out;
}

// A GGUF file's hyperparameters as config.json fields.
nn::LlamaConfig config_of(const io::GgufLlamaConfig& g) {
  nn::LlamaConfig cfg;
  cfg.vocab_size = g.vocab_size;
  cfg.hidden_size = g.hidden_size;
  cfg.intermediate_size = g.intermediate_size;
  cfg.num_hidden_layers = g.num_hidden_layers;
  cfg.num_attention_heads = g.num_attention_heads;
  cfg.num_key_value_heads = g.num_key_value_heads;
  cfg.head_dim = g.head_dim;
  cfg.max_position_embeddings = g.max_position_embeddings;
  cfg.rms_norm_eps = g.rms_norm_eps;
  cfg.rope_theta = g.rope_theta;
  cfg.rope_freq_factors = g.rope_freq_factors;
  cfg.tie_word_embeddings = g.tie_word_embeddings;
  return cfg;
}

class LlamaTest : public testing::DeviceTest {};

TEST_P(LlamaTest, LogitsMatchTransformers) {
  const auto ref = reference();
  const auto expected = io::load_safetensors(kDir + "expected.safetensors").tensors;
  for (const char* name :
       {"llama3_rope", "default_rope", "linear_rope", "dynamic_rope", "qwen2", "qwen2_bf16"}) {
    SCOPED_TRACE(name);
    const auto& c = find_case(ref, name);
    auto model = load_case(c, device());
    NoGradGuard no_grad;
    auto ids = c["prompt_ids"].get<std::vector<int64_t>>();
    Tensor logits = model(from_vector(ids, Shape{1, static_cast<int64_t>(ids.size())}).to(device()))
                        .select(0, 0);
    Tensor picked =
        logits.index_select(0, from_vector(c["positions"].get<std::vector<int64_t>>(),
                                           Shape{static_cast<int64_t>(c["positions"].size())})
                                   .to(device()));
    Tensor want;
    for (const auto& [n, t] : expected)
      if (n == std::string(name) + ".logits") want = t;
    ASSERT_TRUE(want.defined());
    // float32: within 1e-5 of the logits' scale (transformers sums in another order; seen:
    // 2e-5 at a scale of 5.3); bfloat16: every layer rounds to 8 bits (seen: 0.08 at 5.4).
    const bool bf16 = c["dtype"] == "bfloat16";
    const double scale = want.abs().max().item<float>();
    EXPECT_TRUE(
        tensor_close(picked.to(kFloat32), want, bf16 ? 2e-2 : 1e-5, (bf16 ? 2e-2 : 1e-5) * scale));
  }
}

TEST_P(LlamaTest, GreedyContinuationsMatchTransformers) {
  const auto ref = reference();
  for (const char* name :
       {"llama3_rope", "default_rope", "linear_rope", "dynamic_rope", "qwen2", "qwen2_bf16"}) {
    SCOPED_TRACE(name);
    const auto& c = find_case(ref, name);
    auto model = load_case(c, device());
    nn::GenerationConfig g;
    g.max_new_tokens = ref["new_tokens"];
    g.pad_token_id = 3;
    auto one = nn::generate(*model, {c["greedy_prompt"].get<std::vector<int64_t>>()}, g);
    const auto want = c["greedy"].get<std::vector<int64_t>>();
    auto batch = nn::generate(*model, unpad(c["batch_prompts"], c["batch_mask"]), g);
    auto want_batch = c["batch_greedy"].get<std::vector<std::vector<int64_t>>>();
    if (c["dtype"] == "bfloat16") {
      // In bfloat16 near-ties between logits break differently once the sums differ in the
      // last bits: the first tokens must agree.
      for (size_t i = 0; i < 4; ++i) EXPECT_EQ(one.tokens[0][i], want[i]) << i;
      for (size_t b = 0; b < 2; ++b)
        for (size_t i = 0; i < 4; ++i) EXPECT_EQ(batch.tokens[b][i], want_batch[b][i]) << b;
      continue;
    }
    EXPECT_EQ(one.tokens[0], want);
    EXPECT_EQ(batch.tokens, want_batch);
    EXPECT_EQ(one.decode_steps, g.max_new_tokens - 1);
  }
}

TEST_P(LlamaTest, CachedStepsEqualFullRecomputation) {
  const auto ref = reference();
  for (const char* name : {"llama3_rope", "qwen2"}) {
    SCOPED_TRACE(name);
    auto model = load_case(find_case(ref, name), device());
    NoGradGuard no_grad;
    auto ids = find_case(ref, name)["prompt_ids"].get<std::vector<int64_t>>();
    ids.resize(12);
    Tensor all = from_vector(ids, Shape{1, 12}).to(device());
    Tensor full = model(all);  // (1, 12, V)
    nn::KvCache cache = model->new_cache(1, 16);
    // A prefill of 5, a chunk of 3 (causal over cached positions), then single steps.
    std::vector<Tensor> parts = {model(all.narrow(1, 0, 5), &cache),
                                 model(all.narrow(1, 5, 3), &cache)};
    for (int64_t i = 8; i < 12; ++i) parts.push_back(model(all.narrow(1, i, 1), &cache));
    EXPECT_EQ(cache.length(), 12);
    EXPECT_TRUE(tensor_close(cat(parts, 1), full, 1e-5, 1e-5));
    // logits_to_keep: only the last position.
    cache.reset();
    EXPECT_TRUE(tensor_close(model(all, &cache, Tensor(), 1), full.narrow(1, 11, 1), 1e-5, 1e-5));
    EXPECT_TRUE(throws_error([&] { model(all.narrow(1, 0, 5), &cache); }, ErrorKind::Index,
                             {"[KvCache]", "capacity of 16"}));
  }
}

// Loading stacks q/k/v and gate/up (one product each); the stacked model computes exactly what
// the layers one by one compute, falls back to them once a parameter no longer views the stack
// (here: assigned new data) and while training, where the gradients reach the parameters.
TEST_P(LlamaTest, StackedProjectionsComputeWhatTheLayersDo) {
  const auto ref = reference();
  const auto& c = find_case(ref, "qwen2");  // q/k/v biases
  auto stacked = load_case(c, device());
  auto& attn = *stacked->model->layers[0]->self_attn;
  ASSERT_TRUE(attn.qkv.weight.defined());
  ASSERT_TRUE(stacked->model->layers[0]->mlp->gate_up.weight.defined());
  EXPECT_EQ(attn.k_proj->weight.storage_offset(),
            attn.q_proj->weight.numel() + attn.qkv.weight.storage_offset());
  auto ids = c["prompt_ids"].get<std::vector<int64_t>>();
  Tensor input = from_vector(ids, Shape{1, static_cast<int64_t>(ids.size())}).to(device());
  Tensor one = input.narrow(1, 0, 1);
  auto separate = load_case(c, device());
  for (auto& layer : separate->model->layers) {
    layer->self_attn->qkv = {};
    layer->mlp->gate_up = {};
  }
  {
    NoGradGuard no_grad;
    EXPECT_TRUE(tensor_equal(stacked(input), separate(input)));  // packed GEMM
    EXPECT_TRUE(tensor_equal(stacked(one), separate(one)));      // one row
    // New data for v_proj's weight: the stack no longer holds it, so it must not be used.
    Tensor v = attn.v_proj->weight;
    v.set_data(v.clone() * 2);
    separate->model->layers[0]->self_attn->v_proj->weight.set_data(v.clone());
    EXPECT_TRUE(tensor_equal(stacked(one), separate(one)));
  }
  stacked->train();
  Tensor loss = stacked(input).to(kFloat32).sum();
  loss.backward();
  ASSERT_TRUE(attn.q_proj->weight.grad().defined());
  ASSERT_TRUE(stacked->model->layers[0]->mlp->up_proj->weight.grad().defined());
  EXPECT_GT(attn.q_proj->weight.grad().abs().sum().item<double>(), 0);
}

// tiny_llama.gguf holds tiny_llama's weights (q and k rows permuted as llama.cpp's converter
// does) and tokenizer, without rope scaling: it must compute the default_rope case.
TEST_P(LlamaTest, GgufFileRunsAsItsFolder) {
  const auto ref = reference();
  const auto& c = find_case(ref, "default_rope");
  const io::GgufFile file = io::load_gguf(kDir + "tiny_llama.gguf", device());
  const io::GgufHfLlama hf = io::gguf_to_hf_llama(file);
  const nn::LlamaConfig cfg = config_of(hf.config);
  EXPECT_EQ(cfg.head_dim, 16);
  EXPECT_FALSE(hf.config.tie_word_embeddings);
  nn::LlamaForCausalLM model(cfg);
  model->to(device());
  model->load_hf_state_dict(hf.tensors);
  model->eval();
  nn::GenerationConfig g;
  g.max_new_tokens = ref["new_tokens"];
  g.pad_token_id = 3;
  EXPECT_EQ(nn::generate(*model, {c["greedy_prompt"].get<std::vector<int64_t>>()}, g).tokens[0],
            c["greedy"].get<std::vector<int64_t>>());
  EXPECT_EQ(nn::generate(*model, unpad(c["batch_prompts"], c["batch_mask"]), g).tokens,
            (c["batch_greedy"].get<std::vector<std::vector<int64_t>>>()));

  // The tokenizer in its metadata is the folder's tokenizer.json.
  const io::GgufTokenizer t = io::gguf_tokenizer(file);
  EXPECT_EQ(t.bos_token_id, 0);
  EXPECT_EQ(t.eos_token_ids, (std::vector<int64_t>{1, 2}));
  auto from_gguf = data::BpeTokenizer::from_json(t.json, "tiny_llama.gguf");
  auto from_json = data::BpeTokenizer::from_file(kDir + "tiny_llama/tokenizer.json");
  EXPECT_EQ(from_gguf.encode(ref["prompt"]), c["prompt_ids"].get<std::vector<int64_t>>());
  for (const std::string text : {"", "  spaces  and\ttabs\n\n", "12345 café 日本語 🚀",
                                 "<|begin_of_text|>x<|eot_id|>", "don't DON'T"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(from_gguf.encode(text), from_json.encode(text));
    EXPECT_EQ(from_gguf.decode(from_json.encode(text), true),
              from_json.decode(from_json.encode(text), true));
  }
}

// tiny_llama_rope_freqs.gguf adds the rope_freqs.weight factors llama.cpp's converter writes for
// llama3 rope scaling: it must compute the llama3_rope case (logits and greedy text), and factors
// of the wrong count or sign are refused.
TEST_P(LlamaTest, GgufRopeFreqsComputeTheLlama3Scaling) {
  const auto ref = reference();
  const auto& c = find_case(ref, "llama3_rope");
  const io::GgufFile file = io::load_gguf(kDir + "tiny_llama_rope_freqs.gguf", device());
  const io::GgufHfLlama hf = io::gguf_to_hf_llama(file);
  ASSERT_EQ(hf.config.rope_freq_factors.size(), 8u);
  EXPECT_EQ(hf.config.rope_freq_factors[1], 4.0f);
  nn::LlamaForCausalLM model(config_of(hf.config));
  model->to(device());
  model->load_hf_state_dict(hf.tensors);
  model->eval();
  {
    NoGradGuard no_grad;
    auto ids = c["prompt_ids"].get<std::vector<int64_t>>();
    const Tensor logits =
        model(from_vector(ids, Shape{1, static_cast<int64_t>(ids.size())}).to(device()))
            .select(0, 0)
            .index_select(0, from_vector(c["positions"].get<std::vector<int64_t>>(),
                                         Shape{static_cast<int64_t>(c["positions"].size())})
                                 .to(device()));
    Tensor want;
    for (const auto& [n, t] : io::load_safetensors(kDir + "expected.safetensors").tensors)
      if (n == "llama3_rope.logits") want = t;
    ASSERT_TRUE(want.defined());
    // The factors divide each inverse frequency where transformers multiplies by their inverse:
    // angles agree to float32 rounding.
    const double scale = want.abs().max().item<float>();
    EXPECT_TRUE(tensor_close(logits.to(kFloat32), want, 1e-4, 1e-4 * scale));
  }
  nn::GenerationConfig g;
  g.max_new_tokens = ref["new_tokens"];
  EXPECT_EQ(nn::generate(*model, {c["greedy_prompt"].get<std::vector<int64_t>>()}, g).tokens[0],
            c["greedy"].get<std::vector<int64_t>>());
  nn::LlamaConfig bad = config_of(hf.config);
  bad.rope_freq_factors.pop_back();
  EXPECT_TRUE(throws_error([&] { nn::LlamaForCausalLM m(bad); }, ErrorKind::Shape,
                           {"rope_freq_factors", "7 factors", "head_dim of 16"}));
  bad.rope_freq_factors.push_back(-1.0f);
  EXPECT_TRUE(throws_error([&] { nn::LlamaForCausalLM m(bad); }, ErrorKind::Value,
                           {"rope frequency factor", "-1"}));
}

// Weight-only quantization: the quantized model computes what the float model computes with each
// weight replaced by its dequantized value -- the prompt (dequantized chunks, packed GEMM) and a
// decoding step (the direct kernels) -- in float32 (Llama) and with tied embeddings and biases in
// bfloat16 (Qwen2); its greedy continuation is that model's; only norms and biases stay
// parameters.
TEST_P(LlamaTest, QuantizedModelComputesWithItsDequantizedWeights) {
  const auto ref = reference();
  for (const char* name : {"default_rope", "qwen2_bf16"}) {
    SCOPED_TRACE(name);
    const auto& c = find_case(ref, name);
    auto quant = load_case(c, device());
    auto plain = load_case(c, device());
    quant->quantize(QuantType::Int8);
    {
      NoGradGuard no_grad;
      for (const auto& m : plain->modules()) {
        Tensor w;
        if (auto* l = dynamic_cast<nn::LinearImpl*>(m.get())) w = l->weight;
        if (auto* e = dynamic_cast<nn::EmbeddingImpl*>(m.get())) w = e->weight;
        if (w.defined()) w.copy_(QuantizedTensor::quantize(w).dequantize(w.dtype()));
      }
    }
    EXPECT_TRUE(quant->model->layers[0]->self_attn->qkv.weight_quantized.defined());
    EXPECT_TRUE(quant->model->layers[0]->mlp->gate_up.weight_quantized.defined());
    for (const auto& [pname, p] : quant->named_parameters())
      EXPECT_TRUE(pname.ends_with("norm.weight") || pname.ends_with(".bias")) << pname;
    auto ids = c["prompt_ids"].get<std::vector<int64_t>>();
    const Tensor input = from_vector(ids, Shape{1, static_cast<int64_t>(ids.size())}).to(device());
    const bool bf16 = c["dtype"] == "bfloat16";
    NoGradGuard no_grad;
    const Tensor got = quant(input), want = plain(input);
    EXPECT_EQ(got.dtype(), want.dtype());
    // bfloat16: the plain model's weights are the dequantized values rounded to bfloat16, and
    // each layer's output is rounded: agreement to a few percent of the logits' scale.
    const double scale = want.to(kFloat32).abs().max().item<double>();
    const double tol = bf16 ? 0.1 : 1e-5;
    EXPECT_TRUE(tensor_close(got.to(kFloat32), want.to(kFloat32), tol, tol * scale));
    if (bf16) {
      EXPECT_LT((got.to(kFloat32) - want.to(kFloat32)).abs().mean().item<double>(), 0.02 * scale);
    }
    const Tensor one = input.narrow(1, 0, 1);
    EXPECT_TRUE(tensor_close(quant(one).to(kFloat32), plain(one).to(kFloat32), tol, tol * scale));
    if (!bf16) {
      nn::GenerationConfig g;
      g.max_new_tokens = ref["new_tokens"];
      const auto prompt = c["greedy_prompt"].get<std::vector<int64_t>>();
      EXPECT_EQ(nn::generate(*quant, {prompt}, g).tokens, nn::generate(*plain, {prompt}, g).tokens);
    }
  }
}

// A GGUF file's Q8_0 tensors (llama_tiny.gguf: layer 1's q and k) kept as blocks compute what
// their dequantized values do; q and k stay apart from the float v (stacked only alike).
TEST_P(LlamaTest, GgufQuantizedWeightsComputeAsTheirValues) {
  const std::string path = std::string(EMBER_REFERENCE_DIR) + "/fixtures/gguf/llama_tiny.gguf";
  auto build = [&](bool keep) {
    const io::GgufFile f = io::load_gguf(path, device(), {.keep_quantized = keep});
    const io::GgufHfLlama hf = io::gguf_to_hf_llama(f);
    nn::LlamaForCausalLM m(config_of(hf.config));
    m->to(device());
    std::vector<std::pair<std::string, QuantizedTensor>> q;
    for (const io::GgufTensor& t : hf.quantized)
      q.emplace_back(t.name, *io::gguf_quantized_tensor(t));
    m->set_quantized_weights(q);
    m->load_hf_state_dict(hf.tensors);
    m->eval();
    return m;
  };
  auto kept = build(true), plain = build(false);
  const auto& attn = *kept->model->layers[1]->self_attn;
  EXPECT_TRUE(attn.q_proj->weight_quantized.defined());
  EXPECT_FALSE(attn.v_proj->weight_quantized.defined());
  EXPECT_FALSE(attn.qkv.weight.defined() || attn.qkv.weight_quantized.defined());
  NoGradGuard no_grad;
  const Tensor input = from_vector<int64_t>({1, 5, 7, 3, 11, 2}, Shape{1, 6}).to(device());
  EXPECT_TRUE(tensor_close(kept(input), plain(input), 1e-5, 1e-5));
  EXPECT_TRUE(tensor_close(kept(input.narrow(1, 0, 1)), plain(input.narrow(1, 0, 1)), 1e-5, 1e-5));
  const QuantizedTensor some = attn.q_proj->weight_quantized;
  EXPECT_TRUE(throws_error(
      [&] {
        plain->set_quantized_weights({{"model.layers.9.mlp.up_proj.weight", some}});
      },
      ErrorKind::Value, {"model.layers.9.mlp.up_proj.weight"}));
  EXPECT_TRUE(throws_error(
      [&] {
        plain->set_quantized_weights({{"model.layers.0.self_attn.k_proj.weight", some}});
      },
      ErrorKind::Shape, {"[32, 32]", "out_features=16"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(LlamaTest);

TEST(GgufTokenizer, RefusesWhatItCannotRead) {
  io::GgufFile f;
  EXPECT_TRUE(throws_error([&] { io::gguf_tokenizer(f); }, ErrorKind::Value,
                           {"no tokenizer", "tokenizer.json"}));
  f.metadata["tokenizer.ggml.model"] = io::GgufValue("bert");
  EXPECT_TRUE(throws_error([&] { io::gguf_tokenizer(f); }, ErrorKind::Value,
                           {"'bert'", "\"gpt2\"", "\"llama\""}));
  // A SentencePiece vocabulary needs its scores, finite, one per token.
  f.metadata["tokenizer.ggml.model"] = io::GgufValue("llama");
  io::GgufValue::Array pieces{io::GgufType::String, {io::GgufValue("a"), io::GgufValue("b")}};
  f.metadata["tokenizer.ggml.tokens"] = io::GgufValue(pieces);
  EXPECT_TRUE(throws_error([&] { io::gguf_tokenizer(f); }, ErrorKind::Value,
                           {"tokenizer.ggml.scores", "lacks"}));
  f.metadata["tokenizer.ggml.scores"] =
      io::GgufValue(io::GgufValue::Array{io::GgufType::Float32, {io::GgufValue(0.0f)}});
  EXPECT_TRUE(throws_error([&] { io::gguf_tokenizer(f); }, ErrorKind::Value,
                           {"tokenizer.ggml.scores has 1 entries", "2 tokens"}));
  f.metadata["tokenizer.ggml.scores"] = io::GgufValue(io::GgufValue::Array{
      io::GgufType::Float32, {io::GgufValue(0.0f), io::GgufValue(std::nanf(""))}});
  EXPECT_TRUE(throws_error([&] { io::gguf_tokenizer(f); }, ErrorKind::Value,
                           {"token 1 has the score", "finite"}));
  f.metadata["tokenizer.ggml.model"] = io::GgufValue("gpt2");
  f.metadata["tokenizer.ggml.pre"] = io::GgufValue("deepseek-coder");
  EXPECT_TRUE(
      throws_error([&] { io::gguf_tokenizer(f); }, ErrorKind::Value, {"deepseek-coder", "smollm"}));
  f.metadata["tokenizer.ggml.pre"] = io::GgufValue("gpt-2");
  io::GgufValue::Array tokens{io::GgufType::String, {io::GgufValue("a"), io::GgufValue("a")}};
  f.metadata["tokenizer.ggml.tokens"] = io::GgufValue(tokens);
  EXPECT_TRUE(
      throws_error([&] { io::gguf_tokenizer(f); }, ErrorKind::Value, {"'a' appears twice"}));
}

// A SentencePiece ("llama") vocabulary in GGUF metadata (spm_reference.py: the llama2 fixture's
// tokens with scores falling by id, no merges): the merges derived from the scores, the ids and
// the decodes are what transformers' GGUF loader gives.
TEST(GgufTokenizer, SentencePieceVocabularyAsTransformersReadsIt) {
  const std::string dir = std::string(EMBER_REFERENCE_DIR) + "/fixtures/bpe/";
  const auto ref = nlohmann::json::parse(read_text(dir + "llama2_gguf.reference.json"));
  const io::GgufTokenizer t = io::gguf_tokenizer(io::load_gguf(dir + "llama2_tokenizer.gguf"));
  const auto j = nlohmann::json::parse(t.json);
  EXPECT_EQ(j["model"]["merges"], ref["merges"]);
  EXPECT_EQ(t.bos_token_id, 1);
  EXPECT_EQ(t.eos_token_ids, std::vector<int64_t>{2});
  const auto tok = data::BpeTokenizer::from_json(t.json, "llama2_tokenizer.gguf");
  EXPECT_EQ(tok.vocab_size(), ref["vocab_size"].get<int64_t>());
  size_t cases = 0;
  for (const auto& c : ref["cases"]) {
    const std::string text = c["text"].get<std::string>();
    SCOPED_TRACE(text);
    EXPECT_EQ(tok.encode(text, true), c["ids"].get<std::vector<int64_t>>());
    EXPECT_EQ(tok.encode(text, false), c["ids_plain"].get<std::vector<int64_t>>());
    EXPECT_EQ(tok.decode(c["ids"].get<std::vector<int64_t>>(), false),
              c["decode"].get<std::string>());
    EXPECT_EQ(tok.decode(c["ids"].get<std::vector<int64_t>>(), true),
              c["decode_skip"].get<std::string>());
    ++cases;
  }
  EXPECT_GE(cases, 60u);
  for (const auto& d : ref["decodes"])
    EXPECT_EQ(tok.decode(d["ids"].get<std::vector<int64_t>>()), d["text"].get<std::string>());
}

TEST(LlamaConfig, FieldsAreReadAndChecked) {
  auto c = nn::LlamaConfig::from_json(read_text(kDir + "tiny_llama/config.json"));
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_EQ(c.num_key_value_heads, 2);
  EXPECT_EQ(c.rope_scaling.type, "llama3");
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 16);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{1}));
  EXPECT_FALSE(c.qkv_bias);
  auto q = nn::LlamaConfig::from_json(read_text(kDir + "tiny_qwen2/config.json"));
  EXPECT_TRUE(q.qkv_bias);
  EXPECT_FALSE(q.o_bias);
  EXPECT_TRUE(q.tie_word_embeddings);
  EXPECT_EQ(q.head_dim, 8);
  EXPECT_EQ(q.torch_dtype, "bfloat16");
  auto bad = [](const std::string& json, std::vector<std::string> parts) {
    return throws_error([&] { nn::LlamaConfig::from_json(json, "c.json"); }, ErrorKind::Value,
                        std::move(parts));
  };
  EXPECT_TRUE(bad(R"({"model_type": "gpt_neox"})", {"c.json", "model_type", "gpt_neox"}));
  EXPECT_TRUE(bad(R"({"hidden_act": "gelu"})", {"hidden_act", "silu"}));
  EXPECT_TRUE(bad(R"({"num_attention_heads": 6, "num_key_value_heads": 4})",
                  {"not a multiple", "num_key_value_heads"}));
  EXPECT_TRUE(bad(R"({"num_attention_heads": 0})", {"num_attention_heads", "is 0"}));
  EXPECT_TRUE(bad(R"({"rope_scaling": {"rope_type": "yarn", "factor": 2}})", {"yarn"}));
  EXPECT_TRUE(bad(R"({"rope_parameters": {"rope_type": "yarn", "factor": 2}})",
                  {"rope_parameters", "yarn"}));
  // transformers 5 writes rope_theta and the scaling as "rope_parameters".
  auto v5 = nn::LlamaConfig::from_json(R"({"rope_theta": 10000, "rope_parameters": {
      "rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})");
  EXPECT_EQ(v5.rope_theta, 500000.0);
  EXPECT_EQ(v5.rope_scaling.type, "llama3");
  EXPECT_EQ(v5.rope_scaling.factor, 8.0);
  EXPECT_EQ(v5.rope_scaling.original_max_position_embeddings, 8192);
  auto v5_default = nn::LlamaConfig::from_json(
      R"({"rope_parameters": {"rope_theta": 100000.0, "rope_type": "default"}})");
  EXPECT_EQ(v5_default.rope_theta, 100000.0);
  EXPECT_EQ(v5_default.rope_scaling.type, "default");
  EXPECT_TRUE(bad(R"({"num_hidden_layers": 100000})", {"num_hidden_layers", "100000"}));
  EXPECT_TRUE(throws_error([] { nn::LlamaConfig::from_json("{", "c.json"); }, ErrorKind::IO,
                           {"c.json", "does not parse"}));
  // A config whose sizes differ from the weights' is refused before a model is built.
  auto weights = io::load_hf_weights(kDir + "tiny_llama").tensors;
  c.num_hidden_layers = 40;
  EXPECT_TRUE(throws_error([&] { c.check_weights(weights, "w"); }, ErrorKind::Value,
                           {"num_hidden_layers", "40", "2 layers"}));
  c.num_hidden_layers = 2;
  c.vocab_size = 1 << 20;
  EXPECT_TRUE(throws_error([&] { c.check_weights(weights, "w"); }, ErrorKind::Value,
                           {"vocab_size", "different models"}));
}

TEST(LlamaConfig, StrictLoadingNamesKeys) {
  auto c = nn::LlamaConfig::from_json(read_text(kDir + "tiny_llama/config.json"));
  nn::LlamaForCausalLM model(c);
  auto weights = io::load_hf_weights(kDir + "tiny_llama").tensors;
  weights.pop_back();
  EXPECT_TRUE(
      throws_error([&] { model->load_hf_state_dict(weights); }, ErrorKind::Value, {"Missing key"}));
}

TEST(Generation, LogitsProcessorsFollowTransformers) {
  Tensor logits = from_vector<float>({2.0f, -1.0f, 0.5f, 1.0f, -3.0f}, Shape{1, 5});
  nn::GenerationConfig g;
  // Repetition penalty: positive logits divided, negative multiplied; applies when greedy too.
  g.repetition_penalty = 2.0;
  auto p = nn::process_logits(logits, {{0, 1, 1}}, g).to_vector<float>();
  EXPECT_EQ(p, (std::vector<float>{1.0f, -2.0f, 0.5f, 1.0f, -3.0f}));
  g.repetition_penalty = 1.0;
  g.do_sample = true;
  g.temperature = 0.5;
  g.top_k = 2;
  const float inf = std::numeric_limits<float>::infinity();
  p = nn::process_logits(logits, {{}}, g).to_vector<float>();
  EXPECT_EQ(p, (std::vector<float>{4.0f, -inf, -inf, 2.0f, -inf}));
  // top_p 0.8 of softmax(2, -1, 0.5, 1, -3) = (.607, .030, .135, .223, .004): from the least
  // likely up, tokens go while the cumulative share stays <= 0.2 (.004, .034, .170; not .393).
  g.temperature = 1.0;
  g.top_k = 0;
  g.top_p = 0.8;
  p = nn::process_logits(logits, {{}}, g).to_vector<float>();
  EXPECT_EQ(p, (std::vector<float>{2.0f, -inf, -inf, 1.0f, -inf}));
  g.top_p = 0.01;  // the most likely token always stays
  p = nn::process_logits(logits, {{}}, g).to_vector<float>();
  EXPECT_EQ(p, (std::vector<float>{2.0f, -inf, -inf, -inf, -inf}));
}

TEST(Generation, SamplingIsSeededAndStopsAtEos) {
  auto c = nn::LlamaConfig::from_json(read_text(kDir + "tiny_llama/config.json"));
  nn::LlamaForCausalLM model(c);
  model->load_hf_state_dict(io::load_hf_weights(kDir + "tiny_llama").tensors);
  model->eval();
  nn::GenerationConfig g;
  g.do_sample = true;
  g.temperature = 1.5;
  g.top_k = 50;
  g.top_p = 0.95;
  g.max_new_tokens = 20;
  g.seed = 7;
  auto a = nn::generate(*model, {{0, 42, 71}}, g);
  auto b = nn::generate(*model, {{0, 42, 71}}, g);
  EXPECT_EQ(a.tokens, b.tokens);
  ASSERT_EQ(a.tokens[0].size(), 20u);
  g.seed = 8;
  EXPECT_NE(nn::generate(*model, {{0, 42, 71}}, g).tokens, a.tokens);
  // A row stops after its end-of-sequence token; the callback sees every step.
  g.seed = 7;
  g.eos_token_ids = {a.tokens[0][4]};
  int steps = 0;
  auto stopped =
      nn::generate(*model, {{0, 42, 71}}, g,
                   [&](const std::vector<int64_t>&, const std::vector<bool>&) { ++steps; });
  const auto first = std::find(a.tokens[0].begin(), a.tokens[0].end(), a.tokens[0][4]);
  EXPECT_EQ(stopped.tokens[0], std::vector<int64_t>(a.tokens[0].begin(), first + 1));
  EXPECT_EQ(steps, static_cast<int>(stopped.tokens[0].size()));
  EXPECT_TRUE(throws_error(
      [&] {
        nn::generate(*model, {{0, 700}}, {});
      },
      ErrorKind::Index, {"token 700"}));
  g.temperature = 0;
  EXPECT_TRUE(
      throws_error([&] { nn::generate(*model, {{0}}, g); }, ErrorKind::Value, {"temperature"}));
}

}  // namespace
}  // namespace ember
