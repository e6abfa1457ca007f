// ember/nn/bert.h: a BERT-family encoder in Hugging Face's BertModel layout -- embeddings with
// token types, post-norm transformer layers, the pooler -- built from ember modules under the
// same parameter names ("embeddings.word_embeddings.weight", "encoder.layer.0.attention.self.
// query.weight", ...), so a model.safetensors of BertModel (or of a sentence-transformers
// folder) loads with strict names.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/modules.h"

namespace ember::nn {

// config.json's fields that the architecture reads. hidden_act: "gelu" (erf), "gelu_new" or
// "gelu_pytorch_tanh" (tanh approximation), or "relu".
struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  int64_t pad_token_id = 0;
  bool add_pooling_layer = true;

  // The fields of a config.json's text (missing ones keep their defaults); throws, naming
  // `source` and the key, on JSON that does not parse, a model_type other than bert,
  // position_embedding_type other than absolute, a field of the wrong type, a size out of range
  // (zero heads, a fractional hidden_size, hidden_size not a multiple of the heads) or an
  // unknown hidden_act.
  static BertConfig from_json(const std::string& json_text,
                              const std::string& source = "config.json");

  // Checks the sizes against the weights of a BertModel checkpoint (names with or without the
  // "bert." prefix) before a model is built, so that a config claiming 100000 layers or a huge
  // vocabulary is an error naming the key, not gigabytes of randomly initialised weights.
  void check_weights(const StateDict& weights, const std::string& source) const;
};

// word + position + token-type embeddings, then LayerNorm and dropout.
class BertEmbeddingsImpl : public Module {
  using Self = BertEmbeddingsImpl;
  EMBER_CLONE(Self, &Self::word_embeddings, &Self::position_embeddings,
              &Self::token_type_embeddings, &Self::LayerNorm_, &Self::dropout)
 public:
  explicit BertEmbeddingsImpl(const BertConfig& config);
  // input_ids, token_type_ids: (N, L) int64 -> (N, L, hidden).
  Tensor forward(const Tensor& input_ids, const Tensor& token_type_ids);
  Embedding word_embeddings, position_embeddings, token_type_embeddings;
  LayerNorm LayerNorm_;
  Dropout dropout;
};

// Multi-head self-attention: query, key, value projections and the attention itself.
class BertSelfAttentionImpl : public Module {
  using Self = BertSelfAttentionImpl;
  EMBER_CLONE(Self, &Self::query, &Self::key, &Self::value)
 public:
  explicit BertSelfAttentionImpl(const BertConfig& config);
  // x: (N, L, hidden), keep: (N, 1, 1, L) bool (true: a real token) or undefined.
  Tensor forward(const Tensor& x, const Tensor& keep);
  int64_t heads, head_size;
  double dropout_p;
  Linear query, key, value;
};

// dense, dropout, then LayerNorm of the sum with the block's input (BertSelfOutput and
// BertOutput).
class BertResidualOutputImpl : public Module {
  using Self = BertResidualOutputImpl;
  EMBER_CLONE(Self, &Self::dense, &Self::LayerNorm_, &Self::dropout)
 public:
  BertResidualOutputImpl(const char* name, int64_t in, const BertConfig& config);
  Tensor forward(const Tensor& x, const Tensor& input);
  Linear dense;
  LayerNorm LayerNorm_;
  Dropout dropout;
};

class BertAttentionImpl : public Module {
  using Self = BertAttentionImpl;
  EMBER_CLONE(Self, &Self::self, &Self::output)
 public:
  explicit BertAttentionImpl(const BertConfig& config);
  Tensor forward(const Tensor& x, const Tensor& keep);
  std::shared_ptr<BertSelfAttentionImpl> self;
  std::shared_ptr<BertResidualOutputImpl> output;
};

class BertIntermediateImpl : public Module {
  using Self = BertIntermediateImpl;
  EMBER_CLONE(Self, &Self::dense)
 public:
  explicit BertIntermediateImpl(const BertConfig& config);
  Tensor forward(const Tensor& x) override;
  std::string act;
  Linear dense;
};

class BertLayerImpl : public Module {
  using Self = BertLayerImpl;
  EMBER_CLONE(Self, &Self::attention, &Self::intermediate, &Self::output)
 public:
  explicit BertLayerImpl(const BertConfig& config);
  Tensor forward(const Tensor& x, const Tensor& keep);
  std::shared_ptr<BertAttentionImpl> attention;
  std::shared_ptr<BertIntermediateImpl> intermediate;
  std::shared_ptr<BertResidualOutputImpl> output;
};

class BertEncoderImpl : public Module {
  using Self = BertEncoderImpl;
  EMBER_CLONE(Self, &Self::layer, &Self::layers)
 public:
  explicit BertEncoderImpl(const BertConfig& config);
  Tensor forward(const Tensor& x, const Tensor& keep);
  ModuleList layer;
  std::vector<std::shared_ptr<BertLayerImpl>> layers;
};

// tanh(dense(first token)).
class BertPoolerImpl : public Module {
  using Self = BertPoolerImpl;
  EMBER_CLONE(Self, &Self::dense)
 public:
  explicit BertPoolerImpl(const BertConfig& config);
  Tensor forward(const Tensor& hidden) override;  // (N, L, hidden) -> (N, hidden)
  Linear dense;
};

struct BertOutput {
  Tensor last_hidden_state;  // (N, L, hidden)
  Tensor pooler_output;      // (N, hidden), undefined without the pooling layer
};

class BertModelImpl : public Module {
  using Self = BertModelImpl;
  EMBER_CLONE(Self, &Self::embeddings, &Self::encoder, &Self::pooler)
 public:
  explicit BertModelImpl(const BertConfig& config = {});
  // input_ids: (N, L) int64 token ids; attention_mask: (N, L), 1 for tokens and 0 for padding
  // (any dtype; undefined: all ones); token_type_ids: (N, L) (undefined: zeros).
  BertOutput forward(const Tensor& input_ids, const Tensor& attention_mask = Tensor(),
                     const Tensor& token_type_ids = Tensor());
  // Loads Hugging Face weights by name: the model's own names, or with the "bert." prefix of
  // BertFor... checkpoints; position_ids buffers of older files are skipped. Strict otherwise
  // (missing or unexpected names and wrong shapes are errors naming them), except that the
  // file's pooler is skipped when the model has none.
  void load_hf_state_dict(const StateDict& state);

  BertConfig config;
  std::shared_ptr<BertEmbeddingsImpl> embeddings;
  std::shared_ptr<BertEncoderImpl> encoder;
  std::shared_ptr<BertPoolerImpl> pooler;
};
EMBER_BUILTIN_MODULE(BertModel);

}  // namespace ember::nn
