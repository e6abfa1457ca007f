// nn/generation.cpp: generate() of ember/nn/generation.h -- the prefill, the decode loop over a
// key/value cache, and the logits processing of each step (on the host: one row of V floats per
// sequence), in transformers' order and with its rules.
#include "ember/nn/generation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>

#include "ember/autograd.h"
#include "ember/creation.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "nn/json_fields.h"

namespace ember::nn {

GenerationConfig GenerationConfig::from_json(const std::string& text, const std::string& source) {
  const nlohmann::json j = detail::parse_json(text, "GenerationConfig", source);
  const detail::JsonFields f(j, source);
  GenerationConfig c;
  c.eos_token_ids = f.token_ids("eos_token_id");
  if (auto it = j.find("pad_token_id"); it != j.end() && !it->is_null())
    c.pad_token_id = f.integer("pad_token_id", 0, 0, int64_t{1} << 24);
  c.do_sample = f.boolean("do_sample", c.do_sample);
  c.temperature = f.number("temperature", c.temperature, 0, 1e6);
  c.top_k = f.integer("top_k", 50, 0, int64_t{1} << 24);
  c.top_p = f.number("top_p", c.top_p, 0, 1);
  c.repetition_penalty = f.number("repetition_penalty", c.repetition_penalty, 1e-6, 1e6);
  if (auto it = j.find("max_new_tokens"); it != j.end() && !it->is_null())
    c.max_new_tokens = f.integer("max_new_tokens", c.max_new_tokens, 0, int64_t{1} << 24);
  return c;
}

void GenerationConfig::check(int64_t vocab_size) const {
  EMBER_CHECK(max_new_tokens >= 0, "[generate] max_new_tokens must not be negative, got ",
              max_new_tokens);
  EMBER_CHECK(!do_sample || (temperature > 0 && std::isfinite(temperature)),
              "[generate] temperature must be positive to sample, got ", temperature,
              " (use greedy decoding instead of temperature 0)");
  EMBER_CHECK(top_p > 0 && top_p <= 1, "[generate] top_p must be in (0, 1], got ", top_p);
  EMBER_CHECK(top_k >= 0, "[generate] top_k must not be negative, got ", top_k);
  EMBER_CHECK(repetition_penalty > 0 && std::isfinite(repetition_penalty),
              "[generate] repetition_penalty must be positive, got ", repetition_penalty);
  EMBER_CHECK(pad_token_id >= 0 && pad_token_id < vocab_size, "[generate] pad_token_id ",
              pad_token_id, " is not a token of the model's vocabulary of ", vocab_size);
}

namespace {

constexpr float kCut = -std::numeric_limits<float>::infinity();

// One row of V logits through the penalty and the warpers (in place).
void process_row(float* row, int64_t V, const std::vector<int64_t>& seen,
                 const GenerationConfig& c) {
  if (c.repetition_penalty != 1.0) {
    // Each token once, however often it appears (transformers gathers, then scatters).
    std::vector<int64_t> ids(seen);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    const auto p = static_cast<float>(c.repetition_penalty);
    for (int64_t id : ids)
      if (id >= 0 && id < V) row[id] = row[id] < 0 ? row[id] * p : row[id] / p;
  }
  if (!c.do_sample) return;
  if (c.temperature != 1.0) {
    const auto t = static_cast<float>(c.temperature);
    for (int64_t i = 0; i < V; ++i) row[i] /= t;
  }
  if (c.top_k > 0 && c.top_k < V) {
    std::vector<float> sorted(row, row + V);
    std::nth_element(sorted.begin(), sorted.begin() + (c.top_k - 1), sorted.end(),
                     std::greater<float>());
    const float kth = sorted[c.top_k - 1];
    for (int64_t i = 0; i < V; ++i)
      if (row[i] < kth) row[i] = kCut;
  }
  if (c.top_p < 1.0) {
    // Ascending order; the tokens whose cumulative probability stays within 1 - top_p go, the
    // most likely always stays.
    std::vector<int64_t> order(V);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return row[a] < row[b]; });
    const float top = row[order[V - 1]];
    double total = 0;
    for (int64_t i = 0; i < V; ++i) total += std::exp(static_cast<double>(row[i]) - top);
    double cumulative = 0;
    std::vector<int64_t> cut;
    for (int64_t i = 0; i + 1 < V; ++i) {
      cumulative += std::exp(static_cast<double>(row[order[i]]) - top) / total;
      if (cumulative <= 1.0 - c.top_p) cut.push_back(order[i]);
    }
    for (int64_t id : cut) row[id] = kCut;
  }
}

}  // namespace

Tensor process_logits(const Tensor& logits, const std::vector<std::vector<int64_t>>& seen,
                      const GenerationConfig& config) {
  EMBER_CHECK_KIND(Shape, logits.dim() == 2 && static_cast<size_t>(logits.size(0)) == seen.size(),
                   "[generate] logits ", shape_str(logits.sizes()), " must be (rows, vocab) with ",
                   seen.size(), " rows");
  Tensor out = logits.to(kCPU).to(kFloat32).contiguous().clone();
  const int64_t V = out.size(1);
  float* p = out.data_ptr<float>();
  for (size_t b = 0; b < seen.size(); ++b) process_row(p + b * V, V, seen[b], config);
  return out;
}

GenerationOutput generate(CausalLanguageModel& model,
                          const std::vector<std::vector<int64_t>>& prompts,
                          const GenerationConfig& config, const GenerationCallback& on_tokens) {
  using Clock = std::chrono::steady_clock;
  const int64_t V = model.vocab_size();
  config.check(V);
  EMBER_CHECK(!prompts.empty(), "[generate] no prompts given");
  const auto B = static_cast<int64_t>(prompts.size());
  int64_t width = 0;
  GenerationOutput out;
  for (const auto& p : prompts) {
    EMBER_CHECK(!p.empty(), "[generate] a prompt has no tokens; give at least one (a BOS token)");
    for (int64_t id : p)
      EMBER_CHECK_KIND(Index, id >= 0 && id < V, "[generate] prompt token ", id,
                       " is outside the model's vocabulary of ", V);
    width = std::max<int64_t>(width, static_cast<int64_t>(p.size()));
    out.prompt_tokens += static_cast<int64_t>(p.size());
  }
  const int64_t total = width + config.max_new_tokens;
  EMBER_CHECK_KIND(Index, total <= model.max_positions(), "[generate] ", width,
                   " prompt tokens and ", config.max_new_tokens, " new ones pass the model's ",
                   model.max_positions(),
                   " positions (max_position_embeddings); ask for fewer tokens or shorten the "
                   "prompt");
  out.tokens.assign(B, {});
  if (config.max_new_tokens == 0) return out;

  NoGradGuard no_grad;
  // Left padding: every row ends at the same position, so each step appends one column.
  std::vector<std::vector<int64_t>> rows(B);  // what the penalty sees (padding included)
  std::vector<int64_t> ids, keep;
  bool padded = false;
  for (int64_t b = 0; b < B; ++b) {
    const auto pad = width - static_cast<int64_t>(prompts[b].size());
    padded = padded || pad > 0;
    rows[b].assign(pad, config.pad_token_id);
    rows[b].insert(rows[b].end(), prompts[b].begin(), prompts[b].end());
    ids.insert(ids.end(), rows[b].begin(), rows[b].end());
    for (int64_t i = 0; i < width; ++i) keep.push_back(i >= pad ? 1 : 0);
  }
  KvCache cache = model.new_cache(B, total);
  const Device device = model.device();
  // The mask over every position, filled as tokens are appended (only when padding exists).
  Tensor mask_all;
  if (padded) {
    std::vector<int64_t> m(B * total, 1);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < width; ++i) m[b * total + i] = keep[b * width + i];
    mask_all = from_vector(m, Shape{B, total}).to(device);
  }

  Generator gen(config.seed);
  std::vector<bool> finished(B, false);
  Tensor input = from_vector(ids, Shape{B, width}).to(device);
  auto start = Clock::now();
  for (int64_t step = 0; step < config.max_new_tokens; ++step) {
    const int64_t seen_positions = cache.length() + input.size(1);
    Tensor mask = padded ? mask_all.narrow(1, 0, seen_positions) : Tensor();
    Tensor logits = model.lm_forward(input, &cache, mask, 1).select(1, 0);  // (B, V)
    Tensor scores = process_logits(logits, rows, config);
    std::vector<int64_t> next(B);
    if (config.do_sample) {
      Tensor picks = scores.softmax(-1).multinomial(1, false, &gen).view({B});
      next = picks.to_vector<int64_t>();
    } else {
      next = scores.argmax(-1).to_vector<int64_t>();
    }
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      if (finished[b]) {
        next[b] = config.pad_token_id;
      } else {
        out.tokens[b].push_back(next[b]);
        if (std::find(config.eos_token_ids.begin(), config.eos_token_ids.end(), next[b]) !=
            config.eos_token_ids.end())
          finished[b] = true;
      }
      rows[b].push_back(next[b]);
      all_done = all_done && finished[b];
    }
    if (on_tokens) on_tokens(next, finished);
    const auto now = Clock::now();
    if (step == 0) {
      out.prefill_seconds = std::chrono::duration<double>(now - start).count();
      start = now;
    } else {
      ++out.decode_steps;
    }
    if (all_done) break;
    input = from_vector(next, Shape{B, 1}).to(device);
  }
  out.decode_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (out.decode_steps == 0) out.decode_seconds = 0;
  return out;
}

}  // namespace ember::nn
