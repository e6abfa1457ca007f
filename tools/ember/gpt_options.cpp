// tools/ember/gpt_options.cpp: the GPT's flags, with their defaults and ranges.
#include "gpt_options.h"

#include "cli_checks.h"

namespace ember::cli {

void add_gpt_train_options(CLI::App& t, GptTrainOptions& o) {
  const CLI::Validator positive = integer_in(1, int64_t{1} << 30);
  t.add_option("--layers", o.layers, "gpt: transformer blocks")
      ->check(positive)
      ->capture_default_str();
  t.add_option("--heads", o.heads, "gpt: attention heads")->check(positive)->capture_default_str();
  t.add_option("--embd", o.embd, "gpt: embedding size")->check(positive)->capture_default_str();
  t.add_option("--block-size", o.block_size, "gpt: context length in characters")
      ->check(positive)
      ->capture_default_str();
  t.add_option("--iters", o.iters, "gpt: optimizer steps")->check(positive)->capture_default_str();
  t.add_option("--eval-interval", o.eval_interval,
               "gpt: steps between evaluations (metrics row and checkpoint)")
      ->check(positive)
      ->capture_default_str();
  t.add_option("--eval-iters", o.eval_iters, "gpt: batches per loss estimate")
      ->check(positive)
      ->capture_default_str();
  t.add_option("--warmup-iters", o.warmup_iters, "gpt: steps of linear learning-rate warmup")
      ->check(integer_in(0, int64_t{1} << 30))
      ->capture_default_str();
  t.add_option("--lr-decay-iters", o.lr_decay_iters,
               "gpt: the step where the cosine decay reaches lr / 10 (default: --iters)")
      ->check(positive);
  t.add_option("--grad-accum", o.grad_accum, "gpt: micro-batches per optimizer step")
      ->check(positive)
      ->capture_default_str();
  t.add_option("--dropout", o.dropout, "gpt: dropout probability")
      ->check(number_in(0.0, 0.99))
      ->capture_default_str();
  t.add_option("--weight-decay", o.weight_decay, "gpt: AdamW weight decay of the 2-D weights")
      ->check(non_negative_number())
      ->capture_default_str();
}

void add_generate_options(CLI::App& g, GenerateOptions& o) {
  CLI::Option_group* source = g.add_option_group("model", "What generates (one of them)");
  source->add_option("--checkpoint", o.checkpoint,
                     "A checkpoint written by `ember train --model gpt`");
  source->add_option("--model", o.model,
                     "A language model: a Hugging Face folder (config.json, tokenizer.json, "
                     "safetensors or pytorch_model.bin) or a GGUF file");
  source->require_option(1);
  g.add_option("--prompt", o.prompt, "Text to continue (--checkpoint's default: a newline)");
  g.add_option("--tokens,--max-new-tokens", o.tokens,
               "Characters (--checkpoint, default 500) or tokens (--model, default 128) to "
               "generate")
      ->check(integer_in(0, int64_t{1} << 30));
  g.add_option("--temperature", o.temperature,
               "Divides the logits; below 1 is more conservative (--model: 0 is greedy; "
               "default: the model's generation_config.json, greedy when it has none)")
      ->check(non_negative_number());
  g.add_option("--top-k", o.top_k, "Sample among the k most likely tokens (0: all)")
      ->check(integer_in(0, int64_t{1} << 30));
  g.add_option("--top-p", o.top_p,
               "--model: sample among the most likely tokens whose probabilities sum to p")
      ->check(number_in(1e-9, 1.0));
  g.add_option("--repetition-penalty", o.repetition_penalty,
               "--model: divide the logits of tokens already present by this (1: off)")
      ->check(positive_number());
  g.add_option("--seed", o.seed, "Random seed of the sampling")
      ->check(unsigned_integer())
      ->capture_default_str();
  g.add_option("--dtype", o.dtype,
               "--model: compute in auto (the weights' dtype), float32, bfloat16 or float16")
      ->check(CLI::IsMember({"auto", "float32", "bfloat16", "float16"}))
      ->capture_default_str();
  g.add_option("--quantize", o.quantize,
               "--model: weight-only quantization of the float weights -- int8 (a scale per "
               "row, torchao's scheme), q8_0, q4_0 or q4_1 (ggml's blocks); a GGUF file's Q8_0, "
               "Q4_0 and Q4_1 tensors always run as stored")
      ->check(CLI::IsMember({"none", "int8", "q8_0", "q4_0", "q4_1"}))
      ->capture_default_str();
  g.add_option("--threads", o.threads, "CPU threads (0: OMP_NUM_THREADS or all cores)")
      ->check(integer_in(0, 4096));
  g.add_option("--device", o.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
}

}  // namespace ember::cli
