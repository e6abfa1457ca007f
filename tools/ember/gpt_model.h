// tools/ember/gpt_model.h: a character-level GPT in nanoGPT's shape -- token and position
// embeddings, pre-norm blocks of causal self-attention and a 4x GELU MLP, a final LayerNorm and a
// head tied to the token embedding -- with nanoGPT's initialization and its AdamW groups.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ember/nn.h"
#include "ember/optim.h"

namespace ember::cli {

struct GptConfig {
  int64_t vocab_size = 0, block_size = 64, n_layer = 4, n_head = 4, n_embd = 128;
  double dropout = 0.0;
};

// One c_attn Linear to q, k and v, heads split, causal F::scaled_dot_product_attention, c_proj.
class CausalSelfAttentionImpl : public nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const GptConfig& config);
  Tensor forward(const Tensor& x) override;  // x: (B, T, C) -> (B, T, C)

  int64_t n_head, n_embd;
  double dropout;
  nn::Linear c_attn, c_proj;
  nn::Dropout resid_dropout;
};
EMBER_MODULE(CausalSelfAttention);

// c_fc to 4 * n_embd, GELU, c_proj back, dropout.
class GptMlpImpl : public nn::Module {
 public:
  explicit GptMlpImpl(const GptConfig& config);
  Tensor forward(const Tensor& x) override;  // x: (B, T, C) -> (B, T, C)

  nn::Linear c_fc, c_proj;
  nn::GELU gelu;
  nn::Dropout dropout;
};
EMBER_MODULE(GptMlp);

// x + attn(ln_1(x)), then x + mlp(ln_2(x)).
class GptBlockImpl : public nn::Module {
 public:
  explicit GptBlockImpl(const GptConfig& config);
  Tensor forward(const Tensor& x) override;  // x: (B, T, C) -> (B, T, C)

  nn::LayerNorm ln_1, ln_2;
  CausalSelfAttention attn;
  GptMlp mlp;
};
EMBER_MODULE(GptBlock);

// State dict names: wte.weight, wpe.weight, h.<i>.{ln_1,attn.c_attn,attn.c_proj,ln_2,mlp.c_fc,
// mlp.c_proj}.{weight,bias}, ln_f.{weight,bias}; the head is wte.weight itself.
class GptImpl : public nn::Module {
 public:
  explicit GptImpl(const GptConfig& config);
  // idx: (B, T) int64 token ids, T <= block_size -> logits (B, T, vocab_size).
  Tensor forward(const Tensor& idx) override;
  // Mean cross-entropy of logits (B, T, V) against targets (B, T) int64.
  static Tensor loss(const Tensor& logits, const Tensor& targets);

  GptConfig config;
  nn::Embedding wte, wpe;
  nn::Dropout drop;
  nn::Sequential h;
  nn::LayerNorm ln_f;
};
EMBER_MODULE(Gpt);

// nanoGPT's initialization: every Linear and Embedding weight N(0, 0.02), biases zero, the
// c_proj weights N(0, 0.02 / sqrt(2 * n_layer)); LayerNorms ones and zeros.
void init_gpt_weights(GptImpl& model);

// AdamW with weight decay on the parameters of two or more dims only (matmul weights and
// embeddings), none on biases and LayerNorm parameters.
std::unique_ptr<optim::AdamW> make_gpt_optimizer(const GptImpl& model, double lr,
                                                 double weight_decay,
                                                 std::pair<double, double> betas);

// nanoGPT's schedule: linear warmup over warmup_iters, then cosine from lr down to min_lr at
// decay_iters, min_lr after.
double gpt_lr_at(int64_t iter, double lr, double min_lr, int64_t warmup_iters, int64_t decay_iters);

}  // namespace ember::cli
