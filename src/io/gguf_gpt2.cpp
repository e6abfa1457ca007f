// io/gguf_gpt2.cpp: a GPT-2 GGUF file's tensors under transformers' GPT2LMHeadModel names, the
// Conv1D weights back in their (in, out) shape, and its hyperparameters as config.json names them.
#include <cctype>
#include <string>
#include <utility>

#include "ember/error.h"
#include "ember/io/gguf.h"
#include "ember/ops.h"
#include "io/gguf_format.h"

namespace ember::io {

namespace {

// llama.cpp's per-layer names after "blk.N.", transformers' after "transformer.h.N.", and whether
// the weight is a Conv1D's (stored transposed).
struct LayerName {
  const char* gguf;
  const char* hf;
  bool conv1d;
};
const LayerName kLayerNames[] = {
    {"attn_norm", "ln_1", false},         {"attn_qkv", "attn.c_attn", true},
    {"attn_output", "attn.c_proj", true}, {"ffn_norm", "ln_2", false},
    {"ffn_up", "mlp.c_fc", true},         {"ffn_down", "mlp.c_proj", true},
};

// transformers' name of a GGUF tensor ("" for none); conv1d tells whether it is a Conv1D weight.
std::string hf_name(const std::string& name, bool& conv1d) {
  conv1d = false;
  if (name == "token_embd.weight") return "transformer.wte.weight";
  if (name == "position_embd.weight") return "transformer.wpe.weight";
  if (name == "output_norm.weight") return "transformer.ln_f.weight";
  if (name == "output_norm.bias") return "transformer.ln_f.bias";
  if (name.compare(0, 4, "blk.") != 0) return "";
  size_t i = 4;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  if (i == 4 || i >= name.size() || name[i] != '.') return "";
  const std::string layer = name.substr(4, i - 4), rest = name.substr(i + 1);
  for (const LayerName& n : kLayerNames)
    for (const char* suffix : {".weight", ".bias"})
      if (rest == std::string(n.gguf) + suffix) {
        conv1d = n.conv1d && std::string(suffix) == ".weight";
        return "transformer.h." + layer + "." + n.hf + suffix;
      }
  return "";
}

}  // namespace

GgufHfGpt2 gguf_to_hf_gpt2(const GgufFile& file) {
  const char* who = "gguf_to_hf_gpt2";
  detail::gguf_expect_architecture(file, "gpt2", who);
  EMBER_CHECK(file.quantized.empty(),
              "[gguf_to_hf_gpt2] quantized tensors must be dequantized "
              "first (load the file without keep_quantized)");
  GgufHfGpt2 out;
  GgufGpt2Config& c = out.config;
  c.n_embd = detail::gguf_meta_int(file, "gpt2.embedding_length", std::nullopt, who);
  c.n_layer = detail::gguf_meta_int(file, "gpt2.block_count", std::nullopt, who);
  c.n_head = detail::gguf_meta_int(file, "gpt2.attention.head_count", std::nullopt, who);
  c.n_positions = detail::gguf_meta_int(file, "gpt2.context_length", std::nullopt, who);
  c.n_inner = detail::gguf_meta_int(file, "gpt2.feed_forward_length", 4 * c.n_embd, who);
  c.layer_norm_epsilon =
      detail::gguf_meta_double(file, "gpt2.attention.layer_norm_epsilon", 1e-5, who);
  // The ranges GPT2Config::from_json takes; the sizes are also checked against the tensors when a
  // model is built.
  auto in_range = [](const char* key, double v, double lo, double hi) {
    EMBER_CHECK(v >= lo && v <= hi, "[gguf_to_hf_gpt2] metadata '", key, "' is ", v,
                "; it must be in [", lo, ", ", hi, "]");
  };
  in_range("gpt2.embedding_length", static_cast<double>(c.n_embd), 1, 65536);
  in_range("gpt2.block_count", static_cast<double>(c.n_layer), 1, 1024);
  in_range("gpt2.attention.head_count", static_cast<double>(c.n_head), 1, 4096);
  in_range("gpt2.context_length", static_cast<double>(c.n_positions), 1, 1 << 20);
  in_range("gpt2.feed_forward_length", static_cast<double>(c.n_inner), 1, 8 * 65536);
  in_range("gpt2.attention.layer_norm_epsilon", c.layer_norm_epsilon, 0, 1);
  EMBER_CHECK(c.n_embd % c.n_head == 0, "[gguf_to_hf_gpt2] gpt2.embedding_length ", c.n_embd,
              " is not a multiple of gpt2.attention.head_count ", c.n_head);
  const Tensor* embedding = nullptr;
  const Tensor* output = nullptr;
  for (const auto& [name, t] : file.tensors) {
    if (name == "output.weight") {
      output = &t;
      continue;
    }
    bool conv1d = false;
    const std::string hf = hf_name(name, conv1d);
    EMBER_CHECK(!hf.empty(), "[gguf_to_hf_gpt2] tensor '", name,
                "' has no GPT2LMHeadModel name; is this a GPT-2 file?");
    if (conv1d)
      EMBER_CHECK(t.dim() == 2, "[gguf_to_hf_gpt2] tensor '", name, "' must be 2-D, got ",
                  shape_str(t.sizes()));
    if (name == "token_embd.weight") {
      embedding = &t;
      if (t.dim() >= 1) c.vocab_size = t.size(0);
    }
    out.tensors.emplace_back(hf, conv1d ? t.t() : t);
  }
  if (output) {
    EMBER_CHECK(embedding && output->sizes() == embedding->sizes() &&
                    output->dtype() == embedding->dtype() &&
                    !output->ne(*embedding).any().item<bool>(),
                "[gguf_to_hf_gpt2] the file's output.weight differs from token_embd.weight; "
                "GPT2LMHeadModel ties its lm_head to the embedding and cannot hold another");
  }
  return out;
}

}  // namespace ember::io
