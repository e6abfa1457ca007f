"""bench/lm_decode_transformers.py: transformers' prefill and decode speed on the workload of
bench/lm_decode.cpp -- the same prompt (token ids 100 + 37 i), batch 1, greedy, a KV cache, end of
sequence ignored -- so that the two can be compared in one run of the machine. The model's forward
is called directly (one prefill, then one step per token), which is transformers at its fastest:
generate() adds its own overhead per step.

    python bench/lm_decode_transformers.py MODEL [--dtype float32|bfloat16|float16] [--threads 2]
        [--tokens 64] [--prompt-tokens 8] [--repeats 5]

MODEL is a Hugging Face folder or a GGUF file (transformers dequantizes it; needs the gguf
package). Current torch and transformers from PyPI, by hand, not in CI. Prints the medians.
"""
import argparse
import os
import statistics
import time

import torch
from transformers import AutoModelForCausalLM


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--prompt-tokens", type=int, default=8)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    dtype = getattr(torch, a.dtype)
    if a.model.endswith(".gguf"):
        model = AutoModelForCausalLM.from_pretrained(
            os.path.dirname(os.path.abspath(a.model)), gguf_file=os.path.basename(a.model),
            torch_dtype=dtype)
    else:
        model = AutoModelForCausalLM.from_pretrained(a.model, torch_dtype=dtype)
    model.eval()
    vocab = model.config.vocab_size
    prompt = torch.tensor([[100 + 37 * i % (vocab - 100) for i in range(a.prompt_tokens)]])

    def run():
        with torch.inference_mode():
            start = time.perf_counter()
            out = model(prompt, use_cache=True)
            past, token = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
            prefilled = time.perf_counter()
            for _ in range(a.tokens - 1):
                out = model(token, past_key_values=past, use_cache=True)
                past, token = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
            done = time.perf_counter()
        return a.prompt_tokens / (prefilled - start), (a.tokens - 1) / (done - prefilled)

    run()  # warm-up
    results = [run() for _ in range(a.repeats)]
    print(f"transformers {__import__('transformers').__version__}, torch {torch.__version__}, "
          f"{a.dtype}, {a.threads} threads, prompt {a.prompt_tokens} tokens, {a.tokens} new tokens, "
          f"{a.repeats} repeats (medians)")
    print(f"  prefill {statistics.median(r[0] for r in results):.1f} tokens/s, "
          f"decode {statistics.median(r[1] for r in results):.2f} tokens/s")


if __name__ == "__main__":
    main()
