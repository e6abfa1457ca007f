// bench/lm_decode.cpp: a language model's prefill and decode speed against the machine's
// memory-bandwidth limit, measured in the same run --
//   ember_lm_decode MODEL [--dtype auto|float32|bfloat16|float16] [--threads N] [--tokens N]
//                         [--prompt-tokens N] [--repeats N] [--unstacked 1]
//                         [--quantize none|int8|q8_0|q4_0]
// MODEL is what `ember generate --model` takes (a Hugging Face folder or a GGUF file). Batch 1,
// greedy, end-of-sequence ignored so that every run decodes --tokens tokens. A decode step reads
// every weight once (the embedding table once, through the lm_head when tied; an untied
// embedding only a row), so the limit is the rate at which `threads` threads read those very
// bytes, summing them with the widest loads the CPU has: the best of three passes right before
// and three right after each repeat, which that repeat's decode rate is divided by. Prints the
// medians of the repeats, and the peak resident memory while loading and while generating
// against the weights' bytes (parameters and quantized weights).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "lm_loader.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The bytes of one weight tensor.
struct Span {
  const unsigned char* data;
  size_t bytes;
};

using Words = uint64_t __attribute__((vector_size(32)));

// The sum of a span's 32-byte words as 64-bit lanes (a tail shorter than that left out), in four
// independent chains of the widest loads the CPU has.
__attribute__((target_clones("avx512f", "avx2", "default"))) uint64_t sum_span(
    const unsigned char* p, size_t bytes) {
  Words s0{}, s1{}, s2{}, s3{};
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    Words w0, w1, w2, w3;
    std::memcpy(&w0, p + i, 32);
    std::memcpy(&w1, p + i + 32, 32);
    std::memcpy(&w2, p + i + 64, 32);
    std::memcpy(&w3, p + i + 96, 32);
    s0 += w0;
    s1 += w1;
    s2 += w2;
    s3 += w3;
  }
  for (; i + 32 <= bytes; i += 32) {
    Words w;
    std::memcpy(&w, p + i, 32);
    s0 += w;
  }
  const Words s = s0 + s1 + s2 + s3;
  return s[0] + s[1] + s[2] + s[3];
}

// Bytes per second at which `threads` threads read the given spans -- the weights a decode step
// reads, where they lie in memory --, each thread an equal share of the bytes: the best of
// `passes` passes. The same bytes, the same threads and the same caches as the decode steps.
double weight_read_limit(const std::vector<Span>& spans, int threads, int passes) {
  size_t total = 0;
  for (const Span& s : spans) total += s.bytes;
  double best = 0;
  volatile uint64_t sink = 0;
  for (int pass = 0; pass < passes; ++pass) {
    std::vector<std::thread> workers;
    std::vector<uint64_t> sums(threads);
    const auto start = Clock::now();
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        const size_t begin = total * t / threads, end = total * (t + 1) / threads;
        uint64_t s = 0;
        size_t offset = 0;  // of the current span in the concatenation
        for (const Span& span : spans) {
          const size_t lo = std::max(begin, offset), hi = std::min(end, offset + span.bytes);
          if (lo < hi) s += sum_span(span.data + (lo - offset), hi - lo);
          offset += span.bytes;
        }
        sums[t] = s;
      });
    for (auto& w : workers) w.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (uint64_t v : sums) sink = sink + v;
    best = std::max(best, static_cast<double>(total) / seconds);
  }
  return best;
}

// The process's peak resident set since it started or since reset_peak_rss() (VmHWM of
// /proc/self/status), in bytes; -1 where there is none.
double peak_rss() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) * 1024;
  return -1;
}

// Starts a new peak (Linux: writing 5 to /proc/self/clear_refs resets VmHWM to the current RSS).
void reset_peak_rss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ember;
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s MODEL [--dtype D] [--threads N] [--tokens N] [--prompt-tokens N] "
                 "[--repeats N] [--unstacked 1] [--quantize Q]\n",
                 argv[0]);
    return 2;
  }
  std::string model_path = argv[1], dtype = "auto", quantize = "none";
  int threads = 2, repeats = 3;
  bool unstacked = false;  // q/k/v and gate/up as separate products (nn::StackedLinears unused)
  int64_t tokens = 128, prompt_tokens = 8;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--dtype")
      dtype = value;
    else if (flag == "--threads")
      threads = std::stoi(value);
    else if (flag == "--tokens")
      tokens = std::stoll(value);
    else if (flag == "--prompt-tokens")
      prompt_tokens = std::stoll(value);
    else if (flag == "--quantize")
      quantize = value;
    else if (flag == "--unstacked")
      unstacked = value == "1";
    else if (flag == "--repeats")
      repeats = std::stoi(value);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    set_num_threads(threads);
    cli::LanguageModel lm = cli::load_language_model(model_path, Device(kCPU), dtype, quantize);
    if (unstacked) {
      if (!lm.llama) throw std::runtime_error("--unstacked 1 is for Llama-family models");
      for (auto& layer : lm.llama->model->layers) {
        layer->self_attn->qkv = {};
        layer->mlp->gate_up = {};
      }
    }
    // Every weight, but an untied embedding table (one row read per step) and GPT-2's position
    // table (one row too).
    // Quantized weights are the buffers "...weight_quantized" (their stored bytes).
    const bool untied = lm.llama && !lm.llama->config.tie_word_embeddings;
    nn::StateDict weights = lm.module->named_parameters();
    for (const auto& [name, b] : lm.module->named_buffers())
      if (name.ends_with(".weight_quantized")) weights.emplace_back(name, b);
    double weight_bytes = 0, parameter_bytes = 0;
    std::vector<Span> spans;
    for (const auto& [name, p] : weights) {
      const size_t bytes = static_cast<size_t>(p.numel()) * p.element_size();
      parameter_bytes += static_cast<double>(bytes);
      if (!(untied && name.starts_with("model.embed_tokens.weight")) &&
          name != "transformer.wpe.weight") {
        spans.push_back({static_cast<const unsigned char*>(p.raw_data_ptr()), bytes});
        weight_bytes += static_cast<double>(bytes);
      }
    }
    const double load_peak = peak_rss();
    reset_peak_rss();
    const int64_t vocab = lm.model->vocab_size();
    std::vector<int64_t> prompt(prompt_tokens);
    for (int64_t i = 0; i < prompt_tokens; ++i) prompt[i] = 100 + 37 * i % (vocab - 100);
    nn::GenerationConfig g;
    g.max_new_tokens = tokens;
    g.eos_token_ids.clear();
    nn::generate(*lm.model, {prompt}, g);  // warm-up
    // The machine's bandwidth drifts with its neighbours' load: each repeat is compared with the
    // limit measured right before and right after it.
    std::vector<double> prefill, decode, limits, shares;
    for (int r = 0; r < repeats; ++r) {
      const double before = weight_read_limit(spans, threads, 3);
      nn::GenerationOutput out = nn::generate(*lm.model, {prompt}, g);
      const double limit = std::max(before, weight_read_limit(spans, threads, 3));
      prefill.push_back(out.prompt_tokens / out.prefill_seconds);
      decode.push_back(out.decode_steps / out.decode_seconds);
      limits.push_back(limit);
      shares.push_back(decode.back() * weight_bytes / limit);
    }
    const double run_peak = peak_rss();
    const double tok_s = median(decode), limit = median(limits);
    std::printf(
        "%s\n  dtype %s, %d threads, prompt %lld tokens, %lld new tokens, %d repeats (medians)%s\n"
        "  prefill %.1f tokens/s, decode %.2f tokens/s (%.1f GB/s of weights)\n"
        "  weights read per token %.1f MB; memory read limit %.2f GB/s = %.2f tokens/s\n"
        "  decode at %.0f %% of the limit (median of each repeat against its own limit; "
        "range %.0f-%.0f %%)\n"
        "  memory: weights %.1f MB; peak RSS %.1f MB while loading, %.1f MB (%.2fx the "
        "weights) while generating\n",
        lm.summary.c_str(), dtype_name(lm.dtype), threads, static_cast<long long>(prompt_tokens),
        static_cast<long long>(tokens), repeats, unstacked ? ", projections unstacked" : "",
        median(prefill), tok_s, tok_s * weight_bytes / 1e9, weight_bytes / 1e6, limit / 1e9,
        limit / weight_bytes, 100 * median(shares),
        100 * *std::min_element(shares.begin(), shares.end()),
        100 * *std::max_element(shares.begin(), shares.end()), parameter_bytes / 1e6,
        load_peak / 1e6, run_peak / 1e6, run_peak / parameter_bytes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
