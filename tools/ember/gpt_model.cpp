// tools/ember/gpt_model.cpp: the GPT's layers, its initialization, optimizer groups and schedule.
#include "gpt_model.h"

#include <cmath>
#include <numbers>

#include "ember/error.h"

namespace ember::cli {

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const GptConfig& config)
    : nn::Module("CausalSelfAttention"),
      n_head(config.n_head),
      n_embd(config.n_embd),
      dropout(config.dropout),
      c_attn(config.n_embd, 3 * config.n_embd),
      c_proj(config.n_embd, config.n_embd),
      resid_dropout(config.dropout) {
  EMBER_CHECK(n_embd % n_head == 0, "--embd ", n_embd, " must be a multiple of --heads ", n_head);
  register_module("c_attn", c_attn.ptr());
  register_module("c_proj", c_proj.ptr());
  register_module("resid_dropout", resid_dropout.ptr());
}

Tensor CausalSelfAttentionImpl::forward(const Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), hs = C / n_head;
  std::vector<Tensor> qkv = c_attn(x).split(n_embd, 2);  // three (B, T, C)
  auto heads = [&](const Tensor& t) { return t.view({B, T, n_head, hs}).transpose(1, 2); };
  Tensor y = nn::F::scaled_dot_product_attention(
      heads(qkv[0]), heads(qkv[1]), heads(qkv[2]),
      {.dropout_p = is_training() ? dropout : 0.0, .is_causal = true});  // (B, nh, T, hs)
  return resid_dropout(c_proj(y.transpose(1, 2).contiguous().view({B, T, C})));
}

GptMlpImpl::GptMlpImpl(const GptConfig& config)
    : nn::Module("MLP"),
      c_fc(config.n_embd, 4 * config.n_embd),
      c_proj(4 * config.n_embd, config.n_embd),
      dropout(config.dropout) {
  register_module("c_fc", c_fc.ptr());
  register_module("gelu", gelu.ptr());
  register_module("c_proj", c_proj.ptr());
  register_module("dropout", dropout.ptr());
}

Tensor GptMlpImpl::forward(const Tensor& x) {
  return dropout(c_proj(gelu(c_fc(x))));
}

GptBlockImpl::GptBlockImpl(const GptConfig& config)
    : nn::Module("Block"),
      ln_1(Shape{config.n_embd}),
      ln_2(Shape{config.n_embd}),
      attn(config),
      mlp(config) {
  register_module("ln_1", ln_1.ptr());
  register_module("attn", attn.ptr());
  register_module("ln_2", ln_2.ptr());
  register_module("mlp", mlp.ptr());
}

Tensor GptBlockImpl::forward(const Tensor& x) {
  Tensor y = x + attn(ln_1(x));
  return y + mlp(ln_2(y));
}

GptImpl::GptImpl(const GptConfig& c)
    : nn::Module("GPT"),
      config(c),
      wte(c.vocab_size, c.n_embd),
      wpe(c.block_size, c.n_embd),
      drop(c.dropout),
      ln_f(Shape{c.n_embd}) {
  EMBER_CHECK(c.vocab_size > 0 && c.block_size > 0 && c.n_layer > 0 && c.n_head > 0,
              "the GPT needs a vocabulary, a block size, layers and heads (got vocab ",
              c.vocab_size, ", block ", c.block_size, ", ", c.n_layer, " layers, ", c.n_head,
              " heads)");
  for (int64_t i = 0; i < c.n_layer; ++i) h->push_back(GptBlock(c));
  register_module("wte", wte.ptr());
  register_module("wpe", wpe.ptr());
  register_module("drop", drop.ptr());
  register_module("h", h.ptr());
  register_module("ln_f", ln_f.ptr());
  init_gpt_weights(*this);
}

Tensor GptImpl::forward(const Tensor& idx) {
  const int64_t T = idx.size(1);
  EMBER_CHECK(T <= config.block_size, "a sequence of ", T, " tokens is longer than the block size ",
              config.block_size, "; crop the context first");
  Tensor pos = arange(T, {.device = idx.device()});  // (T)
  Tensor x = drop(wte(idx) + wpe(pos));              // (B, T, C)
  return nn::F::linear(ln_f(h(x)), wte->weight);     // (B, T, V), the head tied to wte
}

Tensor GptImpl::loss(const Tensor& logits, const Tensor& targets) {
  const int64_t V = logits.size(-1);
  return nn::F::cross_entropy(logits.reshape({-1, V}), targets.reshape({-1}));
}

void init_gpt_weights(GptImpl& model) {
  NoGradGuard no_grad;
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(model.config.n_layer));
  for (auto& [name, p] : model.named_parameters()) {
    const bool is_bias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    const bool is_norm = name.find("ln_") != std::string::npos;
    if (is_norm) continue;  // LayerNorm keeps ones and zeros
    if (is_bias) {
      nn::init::zeros_(p);
    } else if (name.find("c_proj.weight") != std::string::npos) {
      nn::init::normal_(p, 0.0, proj_std);
    } else {
      nn::init::normal_(p, 0.0, 0.02);
    }
  }
}

std::unique_ptr<optim::AdamW> make_gpt_optimizer(const GptImpl& model, double lr,
                                                 double weight_decay,
                                                 std::pair<double, double> betas) {
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : model.parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  return std::make_unique<optim::AdamW>(std::vector<optim::ParamGroup<optim::AdamWOptions>>{
      {decay, {.lr = lr, .betas = betas, .weight_decay = weight_decay}},
      {no_decay, {.lr = lr, .betas = betas, .weight_decay = 0.0}}});
}

double gpt_lr_at(int64_t iter, double lr, double min_lr, int64_t warmup_iters,
                 int64_t decay_iters) {
  if (iter < warmup_iters)
    return lr * static_cast<double>(iter + 1) / static_cast<double>(warmup_iters + 1);
  if (iter > decay_iters || decay_iters <= warmup_iters) return min_lr;
  const double ratio =
      static_cast<double>(iter - warmup_iters) / static_cast<double>(decay_iters - warmup_iters);
  return min_lr + 0.5 * (1.0 + std::cos(std::numbers::pi * ratio)) * (lr - min_lr);
}

}  // namespace ember::cli
