// ember/io/gguf.h: reading GGUF files, the single-file model format of llama.cpp and ggml --
// typed metadata (the model's hyperparameters, its tokenizer) and tensors, many of them quantized
// in blocks (Q8_0, Q4_0, the K-quants). load_gguf dequantizes them; GgufOptions::keep_quantized
// keeps the blocks as they are for kernels that compute on them. gguf_to_hf_llama renames a Llama
// file's tensors to the Hugging Face names and undoes the row order llama.cpp's converter gives q
// and k.
//
// Shapes: GGUF lists a tensor's dimensions innermost first (ne[0] is the length of a row, the
// contiguous one); ember's shape is that list reversed, as llama.cpp's converters and
// transformers' GGUF loader treat it. A token_embd.weight of ne = [hidden, vocab] is [vocab,
// hidden] here, a Linear weight [out_features, in_features] as in PyTorch; quantization blocks
// run along the last ember dimension.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ember/io/named_tensors.h"
#include "ember/quantized.h"
#include "ember/tensor.h"

namespace ember::io {

// The metadata value types; the numbers are the file's.
enum class GgufType : uint32_t {
  UInt8 = 0,
  Int8 = 1,
  UInt16 = 2,
  Int16 = 3,
  UInt32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  UInt64 = 10,
  Int64 = 11,
  Float64 = 12,
};

const char* gguf_type_name(GgufType type);

// One metadata value: a number, a bool, a string or an array (of one element type; arrays of
// arrays nest). The accessors throw a Value error naming what the value is when it is not what
// was asked for.
class GgufValue {
 public:
  struct Array {
    GgufType type = GgufType::UInt8;  // the elements' type (meaningful even when empty)
    std::vector<GgufValue> items;
  };
  // The alternatives are in GgufType's order, so index() is the type.
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, Array, uint64_t, int64_t, double>;
  // The position of T among Storage's alternatives (their number when it is none of them).
  template <class T>
  static constexpr size_t index_of() {
    return []<class... Ts>(std::variant<Ts...>*) {
      size_t i = 0;
      ((std::is_same_v<T, Ts> ? false : (++i, true)) && ...);
      return i;
    }(static_cast<Storage*>(nullptr));
  }

  GgufValue() = default;
  template <class T>
  requires(index_of<T>() < std::variant_size_v<Storage>) GgufValue(T value)
      : value_(std::move(value)) {}  // NOLINT: exactly one of the alternatives
  GgufValue(const char* text) : value_(std::string(text)) {}  // NOLINT

  GgufType type() const { return static_cast<GgufType>(value_.index()); }
  bool is_integer() const;
  bool is_float() const { return type() == GgufType::Float32 || type() == GgufType::Float64; }

  // Any integer type, when the value fits int64 / is not negative.
  int64_t to_int() const;
  uint64_t to_uint() const;
  // Float32, Float64 or any integer type.
  double to_double() const;
  bool to_bool() const;
  const std::string& to_string() const;
  const Array& to_array() const;
  // The alternative itself, e.g. get<uint32_t>(); throws unless the type is exactly that.
  template <class T>
  const T& get() const {
    if (const T* p = std::get_if<T>(&value_)) return *p;
    type_error(index_of<T>());
  }
  const Storage& storage() const { return value_; }

 private:
  [[noreturn]] void type_error(size_t wanted) const;
  Storage value_;
};

// The tensor types load_gguf reads (the numbers are ggml's). Others are refused by name.
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
};

// The name of any ggml type number ("Q4_K", "IQ2_XXS", ...; "unknown" when it has none).
const char* ggml_type_name(uint32_t type);
// Elements per block and bytes per block: F32 {1, 4}, Q8_0 {32, 34}, Q4_K {256, 144}, ...
struct GgmlBlock {
  int64_t elements;
  int64_t bytes;
};
GgmlBlock ggml_block(GgmlType type);
bool ggml_is_quantized(GgmlType type);

// Where a tensor is in the file.
struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  Shape shape;          // ember order (GGUF's ne reversed)
  uint64_t offset = 0;  // of its first byte, from the start of the file
  uint64_t nbytes = 0;
};

// A quantized tensor kept as its blocks: `blocks` is a uint8 tensor [rows, row_bytes] where rows
// is the product of all but the last dimension of `shape` and each row holds the blocks of one
// row of the tensor (shape.back() / block elements of them), byte for byte as in the file.
struct GgufTensor {
  std::string name;
  GgmlType type = GgmlType::Q8_0;
  Shape shape;  // the dequantized tensor's
  Tensor blocks;
};

// The blocks dequantized to a tensor of `shape` and `dtype` (float32, float16 or bfloat16) on the
// blocks' device.
Tensor gguf_dequantize(const GgufTensor& tensor, DType dtype = kFloat32);

// A 2-D Q8_0, Q4_0 or Q4_1 tensor as the QuantizedTensor of its blocks (the same bytes, which
// the quantized products compute with as stored); nullopt for other types and shapes.
std::optional<QuantizedTensor> gguf_quantized_tensor(const GgufTensor& tensor);

struct GgufOptions {
  DType dtype = kFloat32;       // what quantized tensors dequantize to: float32, float16, bfloat16
  bool keep_quantized = false;  // quantized tensors go to GgufFile::quantized as their blocks
};

struct GgufFile {
  uint32_t version = 0;    // 2 or 3
  uint64_t alignment = 0;  // of the tensor data: general.alignment, 32 when absent
  std::map<std::string, GgufValue> metadata;
  std::vector<GgufTensorInfo> infos;  // every tensor, in the file's order
  // In the file's order: F32/F16/BF16 tensors as float32/float16/bfloat16, quantized ones
  // dequantized to GgufOptions::dtype -- unless keep_quantized, which puts those in `quantized`.
  NamedTensors tensors;
  std::vector<GgufTensor> quantized;

  const GgufValue* find(const std::string& key) const;
  // Throws a Value error naming the key when the file lacks it.
  const GgufValue& at(const std::string& key) const;
};

// Reads a GGUF file of version 2 or 3 (little-endian; version 1 and big-endian files are refused),
// checking every count, length and offset against the bytes present before allocating, tensor
// data offsets for alignment, overlap and the end of the file, and names for duplicates. Errors
// are IO errors "[load_gguf] 'path' is not a valid GGUF file: ...". Tensors are placed on
// `device`. Large files are mapped, and their pages released as each tensor is read.
GgufFile load_gguf(const std::string& path, Device device = Device(kCPU),
                   const GgufOptions& options = {});

// The hyperparameters of a Llama-architecture file, named as in a Hugging Face config.json.
struct GgufLlamaConfig {
  int64_t vocab_size = 0;               // llama.vocab_size, else token_embd's rows
  int64_t hidden_size = 0;              // llama.embedding_length
  int64_t intermediate_size = 0;        // llama.feed_forward_length
  int64_t num_hidden_layers = 0;        // llama.block_count
  int64_t num_attention_heads = 0;      // llama.attention.head_count
  int64_t num_key_value_heads = 0;      // llama.attention.head_count_kv, else head_count
  int64_t head_dim = 0;                 // llama.attention.key_length, else hidden / heads
  int64_t max_position_embeddings = 0;  // llama.context_length
  double rms_norm_eps = 1e-6;           // llama.attention.layer_norm_rms_epsilon
  double rope_theta = 10000.0;          // llama.rope.freq_base
  bool tie_word_embeddings = false;     // the file has no output.weight
  // rope_freqs.weight, when the file has one (llama.cpp's converter writes Llama 3.1+'s llama3
  // rope scaling as these factors: each inverse frequency is divided by its factor).
  std::vector<float> rope_freq_factors;
};

struct GgufHfLlama {
  NamedTensors tensors;               // Hugging Face names, in the file's order
  std::vector<GgufTensor> quantized;  // the kept quantized tensors, renamed and unpermuted
  GgufLlamaConfig config;
};

// The Hugging Face LlamaForCausalLM name of a llama.cpp tensor name (token_embd.weight ->
// model.embed_tokens.weight, blk.3.attn_q.weight -> model.layers.3.self_attn.q_proj.weight, ...),
// or "" when there is none.
std::string gguf_hf_llama_name(const std::string& gguf_name);

// A general.architecture "llama" file's tensors under their Hugging Face names, with the rows of
// q and k (weights and biases) put back in Hugging Face's order: llama.cpp's converter reshapes
// such a weight to (heads, 2, head_dim / 2, in) and swaps the two middle axes (heads being
// head_count for q and head_count_kv for k); this does the reverse. rope_freqs.weight (llama 3's
// rope factors, which transformers computes from config.json) goes to
// GgufLlamaConfig::rope_freq_factors; any other unknown name is an error.
GgufHfLlama gguf_to_hf_llama(const GgufFile& file);

// The hyperparameters of a GPT-2-architecture file, named as in transformers' GPT2Config.
struct GgufGpt2Config {
  int64_t vocab_size = 0;            // token_embd's rows
  int64_t n_positions = 0;           // gpt2.context_length
  int64_t n_embd = 0;                // gpt2.embedding_length
  int64_t n_layer = 0;               // gpt2.block_count
  int64_t n_head = 0;                // gpt2.attention.head_count
  int64_t n_inner = 0;               // gpt2.feed_forward_length, else 4 n_embd
  double layer_norm_epsilon = 1e-5;  // gpt2.attention.layer_norm_epsilon
};

struct GgufHfGpt2 {
  NamedTensors tensors;  // transformers' GPT2LMHeadModel names, in the file's order
  GgufGpt2Config config;
};

// A general.architecture "gpt2" file's tensors under transformers' names ("transformer.wte.weight",
// "transformer.h.0.attn.c_attn.weight", ...), the Conv1D weights back in their (in, out) shape
// (llama.cpp's converter stores them transposed, as (out, in) rows; these are views of those
// rows). GPT-2 ties its lm_head to the embedding: an output.weight must equal token_embd.weight.
// Quantized tensors must have been dequantized (load_gguf's default). Unknown names are errors.
GgufHfGpt2 gguf_to_hf_gpt2(const GgufFile& file);

// The tokenizer a GGUF file holds in its tokenizer.ggml.* metadata, as the tokenizer.json
// text of the same tokenizer (for data::BpeTokenizer::from_json), with its special ids.
// Byte-level BPE files (tokenizer.ggml.model "gpt2") with the pre-tokenizers llama.cpp names
// "default"/"gpt-2", "llama-bpe", "qwen2", "smollm", and SentencePiece BPE files ("llama":
// tokens, scores and types; the merges derived from the scores, as transformers' GGUF loader
// does) are read; others are a Value error naming what the file has.
struct GgufTokenizer {
  std::string json;
  int64_t bos_token_id = -1;           // -1: none
  std::vector<int64_t> eos_token_ids;  // eos, and eot/eom when the file names them
};
GgufTokenizer gguf_tokenizer(const GgufFile& file);

}  // namespace ember::io
