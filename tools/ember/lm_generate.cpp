// tools/ember/lm_generate.cpp: `ember generate --model DIR|FILE.gguf` -- the prompt tokenized,
// one prefill and one cached step per token (nn::generate), each token's text printed as soon as
// it completes a UTF-8 character, and a last line on stderr with the prompt's and the decode's
// tokens per second.
#include <cstdio>

#include "commands.h"
#include "ember/ember.h"
#include "lm_loader.h"
#include "output.h"

namespace ember::cli {

int run_generate_lm(const GenerateOptions& o) {
  if (o.threads > 0) set_num_threads(o.threads);
  const Device device = pick_device(o.device);
  LanguageModel lm = load_language_model(o.model, device, o.dtype, o.quantize);
  std::fprintf(stderr, "%s\n", lm.summary.c_str());

  nn::GenerationConfig g = lm.generation;
  g.max_new_tokens = o.tokens.value_or(128);
  g.seed = o.seed;
  if (o.temperature) {
    g.do_sample = *o.temperature > 0;
    g.temperature = g.do_sample ? *o.temperature : 1.0;
  } else if (o.top_k || o.top_p) {
    g.do_sample = true;  // asking for a cut asks for sampling
  }
  if (o.top_k) g.top_k = *o.top_k;
  if (o.top_p) g.top_p = *o.top_p;
  if (o.repetition_penalty) g.repetition_penalty = *o.repetition_penalty;

  const data::BpeTokenizer& tok = *lm.tokenizer;
  const std::string prompt = o.prompt.value_or("");
  std::vector<int64_t> ids = tok.encode(prompt);
  EMBER_CHECK(!ids.empty(),
              "[generate] the prompt is empty and the tokenizer adds no BOS token; "
              "give --prompt TEXT");
  if (static_cast<int64_t>(ids.size()) + g.max_new_tokens > lm.max_position_embeddings)
    std::fprintf(stderr,
                 "ember: warning: %zu prompt and %lld new tokens pass the model's "
                 "max_position_embeddings (%lld); text past it may lose coherence\n",
                 ids.size(), static_cast<long long>(g.max_new_tokens),
                 static_cast<long long>(lm.max_position_embeddings));

  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  flush_stdout_checked();
  // The continuation follows the prompt already printed: no start-of-text rules (SentencePiece
  // tokenizers would drop its first space).
  data::BpeDecodeStream stream(tok, /*skip_special_tokens=*/true, /*continuing=*/true);
  nn::GenerationOutput out = nn::generate(
      *lm.model, {ids}, g, [&](const std::vector<int64_t>& next, const std::vector<bool>&) {
        const std::string text = stream.step(next[0]);
        std::fwrite(text.data(), 1, text.size(), stdout);
        flush_stdout_checked();
      });
  const std::string rest = stream.flush() + "\n";
  std::fwrite(rest.data(), 1, rest.size(), stdout);
  flush_stdout_checked();
  const auto n = static_cast<int64_t>(out.tokens[0].size());
  std::fprintf(stderr,
               "prompt: %lld tokens, %.1f tokens/s; decode: %lld tokens, %.1f tokens/s "
               "(%d threads, %s)\n",
               static_cast<long long>(out.prompt_tokens),
               out.prefill_seconds > 0 ? out.prompt_tokens / out.prefill_seconds : 0.0,
               static_cast<long long>(n),
               out.decode_seconds > 0 ? out.decode_steps / out.decode_seconds : 0.0,
               get_num_threads(), dtype_name(lm.dtype));
  return 0;
}

}  // namespace ember::cli
