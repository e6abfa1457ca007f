// fuzz/readers.cpp: the byte-fed readers shared by the fuzz targets and the corpus replay test.
#include "readers.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "data/idx_file.h"
#include "ember/creation.h"
#include "ember/data/bpe.h"
#include "ember/error.h"
#include "ember/quantized.h"
#include "io/gguf_format.h"
#include "io/npy_format.h"
#include "io/npz_format.h"
#include "io/pickle.h"
#include "io/pt_format.h"
#include "io/safetensors_format.h"

namespace ember::fuzz {

namespace {

template <class F>
Outcome run(F&& read) {
  try {
    read();
    return Outcome::Loaded;
  } catch (const Error&) {
    return Outcome::Refused;
  }
}

}  // namespace

Outcome read_safetensors(const uint8_t* data, size_t size) {
  return run([&] { io::detail::decode_safetensors(data, size, "input", Device(kCPU)); });
}

Outcome read_npy(const uint8_t* data, size_t size) {
  return run([&] { io::detail::decode_npy(data, size, "load_npy", "input", Device(kCPU)); });
}

Outcome read_pickle(const uint8_t* data, size_t size) {
  return run([&] {
    io::detail::read_pickle(std::string_view(reinterpret_cast<const char*>(data), size), "input");
  });
}

Outcome read_pt(const uint8_t* data, size_t size) {
  return run([&] { io::detail::decode_pt(data, size, "input", Device(kCPU)); });
}

Outcome read_gguf(const uint8_t* data, size_t size) {
  return run([&] {
    io::GgufFile file = io::detail::decode_gguf(data, size, "input", Device(kCPU));
    const io::GgufValue* arch = file.find("general.architecture");
    if (arch && arch->type() == io::GgufType::String && arch->to_string() == "llama")
      io::gguf_to_hf_llama(file);
    if (arch && arch->type() == io::GgufType::String && arch->to_string() == "gpt2")
      io::gguf_to_hf_gpt2(file);
    // A file with a tokenizer: its metadata as tokenizer.json, that read by the BPE tokenizer,
    // and a round trip through it (what `ember generate --model FILE.gguf` does first).
    if (file.find("tokenizer.ggml.model")) {
      const io::GgufTokenizer t = io::gguf_tokenizer(file);
      const auto tokenizer = data::BpeTokenizer::from_json(t.json, "input");
      tokenizer.decode(tokenizer.encode("Hello, world! 12345 \xc3\xa9t\xc3\xa9"));
    }
    // Its Q8_0 / Q4_0 / Q4_1 tensors kept as blocks and multiplied as `ember generate` does
    // (the direct kernels read every byte of a row: any bytes are some values).
    const io::GgufFile kept =
        io::detail::decode_gguf(data, size, "input", Device(kCPU), {.keep_quantized = true});
    for (const io::GgufTensor& q : kept.quantized) {
      if (q.shape.size() != 2 || q.shape[0] * q.shape[1] > (int64_t{1} << 20)) continue;
      if (const std::optional<QuantizedTensor> w = io::gguf_quantized_tensor(q)) {
        nn::functional::linear(ones({1, q.shape[1]}), *w);
        nn::functional::linear(ones({5, q.shape[1]}), *w);
      }
    }
  });
}

Outcome read_npz(const uint8_t* data, size_t size) {
  return run([&] { io::detail::decode_npz(data, size, "input", Device(kCPU)); });
}

Outcome read_idx(const uint8_t* data, size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("ember_fuzz_idx_" + std::to_string(::getpid())))
          .string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Outcome::Refused;
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  int dims = size >= 4 && data[3] >= 1 && data[3] <= 4 ? data[3] : 1;
  Outcome outcome = run([&] { data::detail::read_idx_ubyte(path, dims, "fuzz_idx"); });
  std::remove(path.c_str());
  return outcome;
}

}  // namespace ember::fuzz
