// nn/bert.cpp: the BERT encoder of ember/nn/bert.h -- Hugging Face's BertModel computation
// (absolute positions, post-norm layers, attention through F::scaled_dot_product_attention
// with the padding mask) and loading its state dict by name.
#include "ember/nn/bert.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "nn/json_fields.h"

namespace ember::nn {

namespace {
Tensor activation(const std::string& act, const Tensor& x) {
  if (act == "gelu") return gelu(x);
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") return gelu(x, "tanh");
  return relu(x);
}
}  // namespace

BertConfig BertConfig::from_json(const std::string& text, const std::string& source) {
  const nlohmann::json j = detail::parse_json(text, "BertConfig", source);
  const detail::JsonFields f(j, source);
  const std::string type = f.string("model_type", "bert");
  EMBER_CHECK(type == "bert", f.where("model_type"), " is '", type,
              "', which is not supported; ember loads BERT-family encoders (model_type bert)");
  const std::string positions = f.string("position_embedding_type", "absolute");
  EMBER_CHECK(positions == "absolute", f.where("position_embedding_type"), " is '", positions,
              "', which is not supported (absolute is)");
  // Bounds far above any published BERT, low enough that a size cannot overflow.
  constexpr int64_t kMaxVocab = int64_t{1} << 24, kMaxWidth = int64_t{1} << 16;
  BertConfig c;
  c.vocab_size = f.integer("vocab_size", c.vocab_size, 1, kMaxVocab);
  c.hidden_size = f.integer("hidden_size", c.hidden_size, 1, kMaxWidth);
  c.num_hidden_layers = f.integer("num_hidden_layers", c.num_hidden_layers, 1, 1024);
  c.num_attention_heads = f.integer("num_attention_heads", c.num_attention_heads, 1, c.hidden_size);
  EMBER_CHECK(c.hidden_size % c.num_attention_heads == 0, f.where("hidden_size"), " ",
              c.hidden_size, " is not a multiple of \"num_attention_heads\" ",
              c.num_attention_heads);
  c.intermediate_size = f.integer("intermediate_size", c.intermediate_size, 1, 4 * kMaxWidth);
  c.hidden_act = f.string("hidden_act", c.hidden_act);
  EMBER_CHECK(c.hidden_act == "gelu" || c.hidden_act == "gelu_new" ||
                  c.hidden_act == "gelu_pytorch_tanh" || c.hidden_act == "relu",
              f.where("hidden_act"), " is '", c.hidden_act,
              "'; ember's BERT has gelu, gelu_new, gelu_pytorch_tanh and relu");
  c.hidden_dropout_prob = f.number("hidden_dropout_prob", c.hidden_dropout_prob, 0, 0.999);
  c.attention_probs_dropout_prob =
      f.number("attention_probs_dropout_prob", c.attention_probs_dropout_prob, 0, 0.999);
  c.max_position_embeddings =
      f.integer("max_position_embeddings", c.max_position_embeddings, 1, int64_t{1} << 20);
  c.type_vocab_size = f.integer("type_vocab_size", c.type_vocab_size, 1, 1 << 16);
  c.layer_norm_eps = f.number("layer_norm_eps", c.layer_norm_eps, 0, 1);
  c.pad_token_id = f.integer("pad_token_id", c.pad_token_id, 0, c.vocab_size - 1);
  return c;
}

void BertConfig::check_weights(const StateDict& weights, const std::string& source) const {
  const detail::WeightShapes w(weights, "BertModel", source, "bert.");
  w.expect("vocab_size", vocab_size, "embeddings.word_embeddings.weight", 0);
  w.expect("hidden_size", hidden_size, "embeddings.word_embeddings.weight", 1);
  w.expect("max_position_embeddings", max_position_embeddings,
           "embeddings.position_embeddings.weight", 0);
  w.expect("type_vocab_size", type_vocab_size, "embeddings.token_type_embeddings.weight", 0);
  w.expect_layers("num_hidden_layers", num_hidden_layers, "encoder.layer.");
  w.expect("intermediate_size", intermediate_size, "encoder.layer.0.intermediate.dense.weight", 0);
}

BertEmbeddingsImpl::BertEmbeddingsImpl(const BertConfig& c)
    : Module("BertEmbeddings"),
      word_embeddings(c.vocab_size, c.hidden_size, c.pad_token_id),
      position_embeddings(c.max_position_embeddings, c.hidden_size),
      token_type_embeddings(c.type_vocab_size, c.hidden_size),
      LayerNorm_(Shape{c.hidden_size}, c.layer_norm_eps),
      dropout(c.hidden_dropout_prob) {
  register_module("word_embeddings", word_embeddings.ptr());
  register_module("position_embeddings", position_embeddings.ptr());
  register_module("token_type_embeddings", token_type_embeddings.ptr());
  register_module("LayerNorm", LayerNorm_.ptr());
  register_module("dropout", dropout.ptr());
}

Tensor BertEmbeddingsImpl::forward(const Tensor& ids, const Tensor& token_types) {
  const int64_t L = ids.size(1);
  EMBER_CHECK_KIND(Index, L <= position_embeddings->num_embeddings, "[BertModel] ", L,
                   " tokens are more than max_position_embeddings (",
                   position_embeddings->num_embeddings, "); truncate the input");
  Tensor positions = arange(0, L, 1, {.dtype = kInt64, .device = ids.device()});
  Tensor x = word_embeddings(ids) + token_type_embeddings(token_types) +
             position_embeddings(positions).unsqueeze(0);
  return dropout(LayerNorm_(x));
}

BertSelfAttentionImpl::BertSelfAttentionImpl(const BertConfig& c)
    : Module("BertSelfAttention"),
      heads(c.num_attention_heads),
      head_size(c.num_attention_heads > 0 ? c.hidden_size / c.num_attention_heads : 0),
      dropout_p(c.attention_probs_dropout_prob),
      query(c.hidden_size, c.hidden_size),
      key(c.hidden_size, c.hidden_size),
      value(c.hidden_size, c.hidden_size) {
  EMBER_CHECK(heads > 0 && head_size * heads == c.hidden_size, "[BertModel] hidden_size (",
              c.hidden_size, ") is not a multiple of num_attention_heads (", heads, ")");
  register_module("query", query.ptr());
  register_module("key", key.ptr());
  register_module("value", value.ptr());
}

Tensor BertSelfAttentionImpl::forward(const Tensor& x, const Tensor& keep) {
  const int64_t N = x.size(0), L = x.size(1);
  // (N, L, hidden) -> (N, heads, L, head_size)
  auto split = [&](const Tensor& t) { return t.view({N, L, heads, head_size}).transpose(1, 2); };
  Tensor context = F::scaled_dot_product_attention(
      split(query(x)), split(key(x)), split(value(x)),
      {.attn_mask = keep, .dropout_p = is_training() ? dropout_p : 0.0});
  return context.transpose(1, 2).reshape({N, L, heads * head_size});
}

BertResidualOutputImpl::BertResidualOutputImpl(const char* name, int64_t in, const BertConfig& c)
    : Module(name),
      dense(in, c.hidden_size),
      LayerNorm_(Shape{c.hidden_size}, c.layer_norm_eps),
      dropout(c.hidden_dropout_prob) {
  register_module("dense", dense.ptr());
  register_module("LayerNorm", LayerNorm_.ptr());
  register_module("dropout", dropout.ptr());
}

Tensor BertResidualOutputImpl::forward(const Tensor& x, const Tensor& input) {
  return LayerNorm_(dropout(dense(x)) + input);
}

BertAttentionImpl::BertAttentionImpl(const BertConfig& c)
    : Module("BertAttention"),
      self(std::make_shared<BertSelfAttentionImpl>(c)),
      output(std::make_shared<BertResidualOutputImpl>("BertSelfOutput", c.hidden_size, c)) {
  register_module("self", self);
  register_module("output", output);
}

Tensor BertAttentionImpl::forward(const Tensor& x, const Tensor& keep) {
  return output->forward(self->forward(x, keep), x);
}

BertIntermediateImpl::BertIntermediateImpl(const BertConfig& c)
    : Module("BertIntermediate"), act(c.hidden_act), dense(c.hidden_size, c.intermediate_size) {
  EMBER_CHECK(act == "gelu" || act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "relu",
              "[BertModel] hidden_act '", act,
              "' is not supported; use gelu, gelu_new, gelu_pytorch_tanh or relu");
  register_module("dense", dense.ptr());
}

Tensor BertIntermediateImpl::forward(const Tensor& x) {
  return activation(act, dense(x));
}

BertLayerImpl::BertLayerImpl(const BertConfig& c)
    : Module("BertLayer"),
      attention(std::make_shared<BertAttentionImpl>(c)),
      intermediate(std::make_shared<BertIntermediateImpl>(c)),
      output(std::make_shared<BertResidualOutputImpl>("BertOutput", c.intermediate_size, c)) {
  register_module("attention", attention);
  register_module("intermediate", intermediate);
  register_module("output", output);
}

Tensor BertLayerImpl::forward(const Tensor& x, const Tensor& keep) {
  Tensor a = attention->forward(x, keep);
  return output->forward(intermediate->forward(a), a);
}

BertEncoderImpl::BertEncoderImpl(const BertConfig& c) : Module("BertEncoder") {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    layers.push_back(std::make_shared<BertLayerImpl>(c));
    layer->push_back_module(layers.back());
  }
  register_module("layer", layer.ptr());
}

Tensor BertEncoderImpl::forward(const Tensor& x, const Tensor& keep) {
  Tensor h = x;
  for (auto& l : layers) h = l->forward(h, keep);
  return h;
}

BertPoolerImpl::BertPoolerImpl(const BertConfig& c)
    : Module("BertPooler"), dense(c.hidden_size, c.hidden_size) {
  register_module("dense", dense.ptr());
}

Tensor BertPoolerImpl::forward(const Tensor& hidden) {
  return tanh(dense(hidden.select(1, 0)));
}

BertModelImpl::BertModelImpl(const BertConfig& c)
    : Module("BertModel"),
      config(c),
      embeddings(std::make_shared<BertEmbeddingsImpl>(c)),
      encoder(std::make_shared<BertEncoderImpl>(c)) {
  register_module("embeddings", embeddings);
  register_module("encoder", encoder);
  if (c.add_pooling_layer) pooler = register_module("pooler", std::make_shared<BertPoolerImpl>(c));
}

BertOutput BertModelImpl::forward(const Tensor& input_ids, const Tensor& attention_mask,
                                  const Tensor& token_type_ids) {
  EMBER_CHECK_KIND(Shape, input_ids.dim() == 2,
                   "[BertModel] input_ids must be (batch, tokens), got ",
                   shape_str(input_ids.sizes()));
  EMBER_CHECK_KIND(DType, !input_ids.is_floating_point(),
                   "[BertModel] input_ids must hold integer token ids, got ", input_ids.dtype());
  const Tensor ids = input_ids.to(kInt64);
  Tensor types = token_type_ids.defined() ? token_type_ids.to(kInt64) : zeros_like(ids);
  Tensor keep;  // (N, 1, 1, L) bool: padding keys take no part
  if (attention_mask.defined()) {
    EMBER_CHECK_KIND(Shape, attention_mask.sizes() == ids.sizes(), "[BertModel] attention_mask ",
                     shape_str(attention_mask.sizes()), " must have input_ids' shape ",
                     shape_str(ids.sizes()));
    keep = (attention_mask != 0).unsqueeze(1).unsqueeze(1);
  }
  Tensor hidden = encoder->forward(embeddings->forward(ids, types), keep);
  return {hidden, pooler ? pooler->forward(hidden) : Tensor()};
}

void BertModelImpl::load_hf_state_dict(const StateDict& state) {
  StateDict mine;
  std::set<std::string> own;
  for (const auto& [name, t] : state_dict()) own.insert(name);
  for (const auto& [name0, t] : state) {
    std::string name = name0;
    if (!own.count(name) && name.rfind("bert.", 0) == 0) name = name.substr(5);
    if (name.size() >= 12 && name.compare(name.size() - 12, 12, "position_ids") == 0) continue;
    // Heads of BertFor... checkpoints (cls.*, classifier.*) are not the encoder's.
    if (!own.count(name) && (name.rfind("cls.", 0) == 0 || name.rfind("classifier.", 0) == 0))
      continue;
    if (!pooler && name.rfind("pooler.", 0) == 0) continue;
    mine.emplace_back(name, t);
  }
  load_state_dict(mine);
}

}  // namespace ember::nn
