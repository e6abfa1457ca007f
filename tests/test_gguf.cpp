// Tests of io::load_gguf against hand-made files (tests/reference/gguf_reference.py builds them
// byte by byte and computes every tensor's values independently, with numpy, from the values its
// blocks were packed from): metadata of every value type, tensors of every type ember reads,
// versions 2 and 3, the alignment; the Llama name mapping and the undoing of the converter's q/k
// row permutation (round trip against a permutation written here from its definition); and
// hostile files, each refused with one clear error.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/io/gguf.h"
#include "ember/io/safetensors.h"
#include "io/gguf_format.h"
#include "test_util.h"

namespace {

using namespace ember;
using ember::testing::tensor_equal;
using io::GgmlType;
using io::GgufType;
using io::GgufValue;
using io::NamedTensors;

std::string fixture(const std::string& name) {
  return std::string(EMBER_REFERENCE_DIR) + "/fixtures/gguf/" + name;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string write_bytes(const std::string& name, const std::string& bytes) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The error decoding `bytes` gives, or "no error".
std::string error_of(const std::string& bytes) {
  try {
    io::detail::decode_gguf(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                            "file.gguf", Device(kCPU));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::IO) << e.what();
    return e.what();
  }
  return "no error";
}

void expect_refused(const std::string& bytes, const std::string& needle) {
  std::string what = error_of(bytes);
  EXPECT_NE(what.find(needle), std::string::npos) << what;
  EXPECT_NE(what.find("[load_gguf] 'file.gguf' is not a valid GGUF file"), std::string::npos)
      << what;
}

// A GGUF file built piece by piece, for the hostile cases.
struct Builder {
  std::string b;
  Builder& u32(uint32_t v) { return raw(&v, 4); }
  Builder& u64(uint64_t v) { return raw(&v, 8); }
  Builder& str(const std::string& s) {
    u64(s.size());
    b += s;
    return *this;
  }
  Builder& raw(const void* p, size_t n) {
    b.append(static_cast<const char*>(p), n);
    return *this;
  }
  Builder& header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
    b += "GGUF";
    return u32(version).u64(tensors).u64(kvs);
  }
  // A tensor info with ember shape `shape` (written innermost first).
  Builder& tensor(const std::string& name, std::vector<uint64_t> shape, uint32_t type,
                  uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(shape.size()));
    for (size_t i = shape.size(); i-- > 0;) u64(shape[i]);
    return u32(type).u64(offset);
  }
  Builder& pad(size_t alignment = 32) {
    b.append((alignment - b.size() % alignment) % alignment, '\0');
    return *this;
  }
  Builder& zeros(size_t n) {
    b.append(n, '\0');
    return *this;
  }
};

TEST(Gguf, MetadataOfEveryType) {
  io::GgufFile f = io::load_gguf(fixture("all_types_v3.gguf"));
  EXPECT_EQ(f.version, 3u);
  EXPECT_EQ(f.alignment, 64u);
  EXPECT_EQ(f.at("general.architecture").to_string(), "ember-test");
  EXPECT_EQ(f.at("general.alignment").get<uint32_t>(), 64u);
  EXPECT_EQ(f.at("test.u8").get<uint8_t>(), 200);
  EXPECT_EQ(f.at("test.i8").get<int8_t>(), -100);
  EXPECT_EQ(f.at("test.u16").get<uint16_t>(), 60000);
  EXPECT_EQ(f.at("test.i16").get<int16_t>(), -30000);
  EXPECT_EQ(f.at("test.u32").get<uint32_t>(), 4000000000u);
  EXPECT_EQ(f.at("test.i32").get<int32_t>(), -2000000000);
  EXPECT_EQ(f.at("test.f32").get<float>(), 1.5f);
  EXPECT_EQ(f.at("test.bool").to_bool(), true);
  EXPECT_EQ(f.at("test.string").to_string(), "h\xc3\xa9llo \xe2\x9c\x93");
  EXPECT_EQ(f.at("test.u64").get<uint64_t>(), (uint64_t{1} << 63) + 5);
  EXPECT_EQ(f.at("test.i64").get<int64_t>(), -(int64_t{1} << 62));
  EXPECT_EQ(f.at("test.f64").get<double>(), 0.1);
  // the generic accessors
  EXPECT_EQ(f.at("test.u16").to_int(), 60000);
  EXPECT_EQ(f.at("test.i8").to_double(), -100.0);
  EXPECT_EQ(f.at("test.u64").to_uint(), (uint64_t{1} << 63) + 5);
  EXPECT_THROW(f.at("test.u64").to_int(), Error);
  EXPECT_THROW(f.at("test.i8").to_uint(), Error);
  EXPECT_THROW(f.at("test.string").get<uint32_t>(), Error);
  EXPECT_THROW(f.at("test.f32").to_int(), Error);
  EXPECT_THROW(f.at("no.such.key"), Error);
  EXPECT_EQ(f.find("no.such.key"), nullptr);

  auto array = [&](const std::string& name, GgufType type) {
    const GgufValue& v = f.at("test.array." + name);
    EXPECT_EQ(v.type(), GgufType::Array);
    EXPECT_EQ(v.to_array().type, type) << name;
    return v.to_array().items;
  };
  auto ints = [](const std::vector<GgufValue>& items) {
    std::vector<int64_t> out;
    for (const GgufValue& v : items) out.push_back(v.to_int());
    return out;
  };
  EXPECT_EQ(ints(array("u8", GgufType::UInt8)), (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(ints(array("i8", GgufType::Int8)), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(ints(array("u16", GgufType::UInt16)), (std::vector<int64_t>{1, 65535}));
  EXPECT_EQ(ints(array("i16", GgufType::Int16)), (std::vector<int64_t>{-32768, 32767}));
  EXPECT_EQ(ints(array("u32", GgufType::UInt32)), (std::vector<int64_t>{7, 4294967295}));
  EXPECT_EQ(ints(array("i32", GgufType::Int32)), (std::vector<int64_t>{-2147483648, 5}));
  EXPECT_EQ(ints(array("i64", GgufType::Int64)), (std::vector<int64_t>{INT64_MIN, 1}));
  auto u64 = array("u64", GgufType::UInt64);
  ASSERT_EQ(u64.size(), 1u);
  EXPECT_EQ(u64[0].get<uint64_t>(), UINT64_MAX);
  auto f32 = array("f32", GgufType::Float32);
  ASSERT_EQ(f32.size(), 2u);
  EXPECT_EQ(f32[0].get<float>(), 0.5f);
  EXPECT_EQ(f32[1].get<float>(), -2.0f);
  auto f64 = array("f64", GgufType::Float64);
  ASSERT_EQ(f64.size(), 2u);
  EXPECT_EQ(f64[0].get<double>(), 1e300);
  EXPECT_EQ(f64[1].get<double>(), -0.25);
  auto bools = array("bool", GgufType::Bool);
  ASSERT_EQ(bools.size(), 2u);
  EXPECT_FALSE(bools[0].to_bool());
  EXPECT_TRUE(bools[1].to_bool());
  auto strings = array("string", GgufType::String);
  ASSERT_EQ(strings.size(), 3u);
  EXPECT_EQ(strings[0].to_string(), "a");
  EXPECT_EQ(strings[1].to_string(), "");
  EXPECT_EQ(strings[2].to_string(), "\xc3\xbc\xc3\x9f");
  auto nested = array("nested", GgufType::Array);
  ASSERT_EQ(nested.size(), 3u);
  EXPECT_EQ(nested[0].to_array().type, GgufType::Int32);
  EXPECT_EQ(ints(nested[0].to_array().items), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ints(nested[1].to_array().items), (std::vector<int64_t>{3}));
  EXPECT_TRUE(nested[2].to_array().items.empty());
  EXPECT_TRUE(array("empty", GgufType::Float32).empty());
}

TEST(Gguf, TensorsOfEveryTypeReadAsComputedIndependently) {
  io::GgufFile f = io::load_gguf(fixture("all_types_v3.gguf"));
  io::SafetensorsFile want = io::load_safetensors(fixture("all_types_expected.safetensors"));
  const std::vector<std::string> order = {"f32",  "f32_3d", "f16",  "bf16", "q8_0",
                                          "q4_0", "q4_1",   "q4_k", "q5_k", "q6_k"};
  ASSERT_EQ(f.tensors.size(), order.size());
  ASSERT_EQ(f.infos.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    SCOPED_TRACE(order[i]);
    EXPECT_EQ(f.tensors[i].first, order[i]);  // the file's order, not the data's
    EXPECT_EQ(f.infos[i].name, order[i]);
    EXPECT_EQ(f.infos[i].offset % 64, 0u);
    const Tensor* expected = nullptr;
    for (const auto& [name, t] : want.tensors)
      if (name == order[i]) expected = &t;
    ASSERT_NE(expected, nullptr);
    const Tensor& got = f.tensors[i].second;
    if (order[i] == "bf16") {  // the expected file holds the bits as uint16
      ASSERT_EQ(got.dtype(), kBFloat16);
      ASSERT_EQ(got.sizes(), expected->sizes());
      EXPECT_EQ(
          std::memcmp(got.contiguous().raw_data_ptr(), expected->raw_data_ptr(), got.nbytes()), 0);
      continue;
    }
    EXPECT_TRUE(tensor_equal(got, *expected));
  }
  EXPECT_EQ(f.infos[1].shape, (Shape{2, 3, 4}));  // GGUF's ne [4, 3, 2] reversed
  EXPECT_EQ(f.infos[7].type, GgmlType::Q4_K);
  EXPECT_EQ(f.infos[7].nbytes, 2u * 144u);
  // the data are in the reverse order of the infos, a gap of one alignment apart
  for (size_t i = 0; i + 1 < order.size(); ++i) EXPECT_GT(f.infos[i].offset, f.infos[i + 1].offset);
}

TEST(Gguf, DequantizesToTheDtypeAskedOrKeepsTheBlocks) {
  io::GgufFile ref = io::load_gguf(fixture("all_types_v3.gguf"));
  io::GgufFile bf = io::load_gguf(fixture("all_types_v3.gguf"), Device(kCPU), {.dtype = kBFloat16});
  for (size_t i = 0; i < ref.tensors.size(); ++i) {
    SCOPED_TRACE(ref.tensors[i].first);
    bool quantized = io::ggml_is_quantized(ref.infos[i].type);
    const Tensor& got = bf.tensors[i].second;
    if (quantized) {
      EXPECT_TRUE(tensor_equal(got, ref.tensors[i].second.to(kBFloat16)));
    } else {
      EXPECT_EQ(got.dtype(), ref.tensors[i].second.dtype());
    }
  }
  EXPECT_THROW(io::load_gguf(fixture("all_types_v3.gguf"), Device(kCPU), {.dtype = kInt32}), Error);

  io::GgufFile kept =
      io::load_gguf(fixture("all_types_v3.gguf"), Device(kCPU), {.keep_quantized = true});
  ASSERT_EQ(kept.tensors.size(), 4u);  // f32, f32_3d, f16, bf16
  ASSERT_EQ(kept.quantized.size(), 6u);
  const std::vector<int64_t> block_bytes = {34, 18, 20, 144, 176, 210};
  for (size_t i = 0; i < kept.quantized.size(); ++i) {
    const io::GgufTensor& q = kept.quantized[i];
    SCOPED_TRACE(q.name);
    EXPECT_EQ(q.name, ref.tensors[4 + i].first);
    EXPECT_EQ(q.type, ref.infos[4 + i].type);
    EXPECT_EQ(q.shape, ref.tensors[4 + i].second.sizes());
    EXPECT_EQ(q.blocks.dtype(), kUInt8);
    const int64_t per_block = io::ggml_block(q.type).elements;
    EXPECT_EQ(io::ggml_block(q.type).bytes, block_bytes[i]);
    EXPECT_EQ(q.blocks.sizes(), (Shape{q.shape[0], q.shape[1] / per_block * block_bytes[i]}));
    EXPECT_TRUE(tensor_equal(io::gguf_dequantize(q), ref.tensors[4 + i].second));
    EXPECT_TRUE(
        tensor_equal(io::gguf_dequantize(q, kFloat16), ref.tensors[4 + i].second.to(kFloat16)));
  }
}

TEST(Gguf, Version2WithTheDefaultAlignment) {
  io::GgufFile f = io::load_gguf(fixture("v2_default_alignment.gguf"));
  io::SafetensorsFile want = io::load_safetensors(fixture("v2_expected.safetensors"));
  EXPECT_EQ(f.version, 2u);
  EXPECT_EQ(f.alignment, 32u);
  EXPECT_EQ(f.at("general.name").to_string(), "v2");
  ASSERT_EQ(f.tensors.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(f.tensors[i].first, want.tensors[i].first);
    EXPECT_TRUE(tensor_equal(f.tensors[i].second, want.tensors[i].second));
    EXPECT_EQ(f.infos[i].offset % 32, 0u);
  }
}

TEST(Gguf, LlamaNamesAndRowOrderAsHuggingFaces) {
  io::GgufFile f = io::load_gguf(fixture("llama_tiny.gguf"));
  io::SafetensorsFile want = io::load_safetensors(fixture("llama_tiny_hf.safetensors"));
  io::GgufHfLlama hf = io::gguf_to_hf_llama(f);
  ASSERT_EQ(hf.tensors.size(), want.tensors.size());
  for (size_t i = 0; i < hf.tensors.size(); ++i) {
    SCOPED_TRACE(want.tensors[i].first);
    EXPECT_EQ(hf.tensors[i].first, want.tensors[i].first);
    EXPECT_TRUE(tensor_equal(hf.tensors[i].second, want.tensors[i].second));
  }
  const io::GgufLlamaConfig& c = hf.config;
  EXPECT_EQ(c.vocab_size, 12);
  EXPECT_EQ(c.hidden_size, 32);
  EXPECT_EQ(c.intermediate_size, 32);
  EXPECT_EQ(c.num_hidden_layers, 2);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.num_key_value_heads, 2);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.max_position_embeddings, 64);
  EXPECT_EQ(c.rms_norm_eps, static_cast<double>(1e-5f));
  EXPECT_EQ(c.rope_theta, 500000.0);
  EXPECT_FALSE(c.tie_word_embeddings);

  // kept as Q8_0 blocks: the rows of the blocks are put back in order the same way
  io::GgufFile kept =
      io::load_gguf(fixture("llama_tiny.gguf"), Device(kCPU), {.keep_quantized = true});
  io::GgufHfLlama hq = io::gguf_to_hf_llama(kept);
  ASSERT_EQ(hq.quantized.size(), 2u);
  EXPECT_EQ(hq.tensors.size() + 2, want.tensors.size());
  for (const io::GgufTensor& q : hq.quantized) {
    SCOPED_TRACE(q.name);
    EXPECT_EQ(q.type, GgmlType::Q8_0);
    for (const auto& [name, t] : want.tensors) {
      if (name == q.name) {
        EXPECT_TRUE(tensor_equal(io::gguf_dequantize(q), t));
      }
    }
  }
  EXPECT_EQ(hq.quantized[0].name, "model.layers.1.self_attn.q_proj.weight");
  EXPECT_EQ(hq.quantized[1].name, "model.layers.1.self_attn.k_proj.weight");
}

// The converter's permutation, from its definition: a weight [rows, in] seen as
// (heads, 2, head_dim / 2, in) with the two middle axes swapped, so that HF row
// h * head_dim + s * head_dim / 2 + i becomes row h * head_dim + i * 2 + s.
Tensor converter_permute(const Tensor& w, int64_t heads) {
  Tensor c = w.contiguous();
  const int64_t rows = c.size(0), cols = c.numel() / rows, head_dim = rows / heads;
  Tensor out = empty_like(c);
  const float* src = c.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < 2; ++s)
      for (int64_t i = 0; i < head_dim / 2; ++i) {
        const int64_t from = h * head_dim + s * (head_dim / 2) + i;
        const int64_t to = h * head_dim + i * 2 + s;
        std::memcpy(dst + to * cols, src + from * cols, sizeof(float) * static_cast<size_t>(cols));
      }
  return out;
}

TEST(Gguf, RotaryPermutationRoundTrip) {
  manual_seed(7);
  const int64_t hidden = 48, heads = 6, kv_heads = 2, head_dim = 8;
  io::GgufFile f;
  f.metadata["general.architecture"] = "llama";
  f.metadata["llama.embedding_length"] = uint32_t{48};
  f.metadata["llama.block_count"] = uint32_t{1};
  f.metadata["llama.attention.head_count"] = uint32_t{6};
  f.metadata["llama.attention.head_count_kv"] = uint32_t{2};
  NamedTensors hf = {
      {"model.layers.0.self_attn.q_proj.weight", randn({hidden, hidden})},
      {"model.layers.0.self_attn.q_proj.bias", randn({hidden})},
      {"model.layers.0.self_attn.k_proj.weight", randn({kv_heads * head_dim, hidden})},
      {"model.layers.0.self_attn.k_proj.bias", randn({kv_heads * head_dim})},
      {"model.layers.0.self_attn.v_proj.weight", randn({kv_heads * head_dim, hidden})}};
  f.tensors = {{"blk.0.attn_q.weight", converter_permute(hf[0].second, heads)},
               {"blk.0.attn_q.bias", converter_permute(hf[1].second, heads)},
               {"blk.0.attn_k.weight", converter_permute(hf[2].second, kv_heads)},
               {"blk.0.attn_k.bias", converter_permute(hf[3].second, kv_heads)},
               {"blk.0.attn_v.weight", hf[4].second}};
  // the permutation moves rows (a test of the test)
  EXPECT_FALSE(tensor_equal(f.tensors[0].second, hf[0].second));
  io::GgufHfLlama out = io::gguf_to_hf_llama(f);
  ASSERT_EQ(out.tensors.size(), hf.size());
  for (size_t i = 0; i < hf.size(); ++i) {
    SCOPED_TRACE(hf[i].first);
    EXPECT_EQ(out.tensors[i].first, hf[i].first);
    EXPECT_TRUE(tensor_equal(out.tensors[i].second, hf[i].second));
  }
  EXPECT_TRUE(out.config.tie_word_embeddings);  // no output.weight
  EXPECT_EQ(out.config.num_key_value_heads, 2);
  EXPECT_EQ(out.config.head_dim, 8);

  // heads that do not divide the rows, a file of another architecture, an unknown name
  f.metadata["llama.attention.head_count"] = uint32_t{5};
  EXPECT_THROW(io::gguf_to_hf_llama(f), Error);
  f.metadata["llama.attention.head_count"] = uint32_t{6};
  f.tensors.emplace_back("blk.0.attn_qkv.weight", zeros({3}));
  EXPECT_THROW(io::gguf_to_hf_llama(f), Error);
  f.tensors.pop_back();
  f.metadata["general.architecture"] = "gpt2";
  EXPECT_THROW(io::gguf_to_hf_llama(f), Error);
}

TEST(Gguf, LlamaNames) {
  EXPECT_EQ(io::gguf_hf_llama_name("token_embd.weight"), "model.embed_tokens.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("output_norm.weight"), "model.norm.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("output.weight"), "lm_head.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.12.attn_q.weight"),
            "model.layers.12.self_attn.q_proj.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.0.attn_k.bias"), "model.layers.0.self_attn.k_proj.bias");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.1.attn_v.weight"),
            "model.layers.1.self_attn.v_proj.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.1.attn_output.weight"),
            "model.layers.1.self_attn.o_proj.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.2.ffn_gate.weight"), "model.layers.2.mlp.gate_proj.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.2.ffn_up.weight"), "model.layers.2.mlp.up_proj.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.2.ffn_down.weight"), "model.layers.2.mlp.down_proj.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.3.attn_norm.weight"),
            "model.layers.3.input_layernorm.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.3.ffn_norm.weight"),
            "model.layers.3.post_attention_layernorm.weight");
  EXPECT_EQ(io::gguf_hf_llama_name("blk..attn_q.weight"), "");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.x.attn_q.weight"), "");
  EXPECT_EQ(io::gguf_hf_llama_name("blk.1.attn_qkv.weight"), "");
  EXPECT_EQ(io::gguf_hf_llama_name("rope_freqs.weight"), "");
}

TEST(Gguf, TruncatedAnywhereIsRefused) {
  for (const char* name : {"all_types_v3.gguf", "v2_default_alignment.gguf"}) {
    const std::string whole = read_bytes(fixture(name));
    ASSERT_GT(whole.size(), 200u);
    EXPECT_EQ(error_of(whole), "no error");
    for (size_t cut = 0; cut < whole.size(); ++cut) {
      std::string what = error_of(whole.substr(0, cut));
      ASSERT_NE(what, "no error") << name << " cut at " << cut;
    }
  }
  // and through the file reader
  const std::string whole = read_bytes(fixture("all_types_v3.gguf"));
  EXPECT_THROW(io::load_gguf(write_bytes("cut.gguf", whole.substr(0, 1000))), Error);
  EXPECT_THROW(io::load_gguf(::testing::TempDir() + "no_such_file.gguf"), Error);
}

TEST(Gguf, HostileHeadersAreRefused) {
  expect_refused("", "magic");
  expect_refused("GGML\3\0\0\0", "magic");
  expect_refused(Builder().header(0, 0, 1).b, "version 1");
  {
    Builder big;
    big.b = std::string("GGUF") + std::string("\0\0\0\3", 4);
    big.zeros(16);
    expect_refused(big.b, "big-endian");
  }
  expect_refused(Builder().header(0, 0, 4).b, "unknown GGUF version 4");
  expect_refused(Builder().header(uint64_t{1} << 60, 0).b, "claims 1152921504606846976 tensors");
  expect_refused(Builder().header(0, UINT64_MAX).b, "metadata pairs");
  // a key whose length is absurd
  expect_refused(Builder().header(0, 1).u64(uint64_t{1} << 62).zeros(20).b, "claims");
  // an array of 2^40 uint32 in a small file
  expect_refused(Builder().header(0, 1).str("k").u32(9).u32(4).u64(uint64_t{1} << 40).zeros(16).b,
                 "array claiming 1099511627776 elements");
  // an array of 2^60 arrays
  expect_refused(Builder().header(0, 1).str("k").u32(9).u32(9).u64(uint64_t{1} << 60).zeros(16).b,
                 "array claiming");
  // a string of 2^63 bytes inside an array
  expect_refused(
      Builder().header(0, 1).str("k").u32(9).u32(8).u64(1).u64(uint64_t{1} << 63).zeros(8).b,
      "claims");
  expect_refused(Builder().header(0, 1).str("k").u32(13).zeros(16).b, "not a GGUF value type");
  expect_refused(Builder().header(0, 1).str("k").u32(9).u32(77).u64(0).zeros(16).b,
                 "not a GGUF value type");
  expect_refused(Builder().header(0, 1).str("k").u32(7).raw("\2", 1).zeros(16).b, "bool byte 2");
  expect_refused(Builder().header(0, 1).str("").u32(4).u32(1).zeros(16).b, "empty key");
  expect_refused(Builder().header(0, 2).str("k").u32(4).u32(1).str("k").u32(4).u32(2).zeros(16).b,
                 "'k' appears twice");
  {  // arrays nested 100 deep
    Builder b;
    b.header(0, 1).str("deep").u32(9);
    for (int i = 0; i < 100; ++i) b.u32(9).u64(1);
    b.u32(4).u64(0);
    expect_refused(b.zeros(16).b, "nests arrays over 64 deep");
  }
  for (uint64_t a : {uint64_t{0}, uint64_t{48}}) {
    SCOPED_TRACE(a);
    expect_refused(Builder()
                       .header(0, 1)
                       .str("general.alignment")
                       .u32(4)
                       .u32(static_cast<uint32_t>(a))
                       .zeros(16)
                       .b,
                   "general.alignment");
  }
  expect_refused(Builder().header(0, 1).str("general.alignment").u32(8).str("32").zeros(16).b,
                 "general.alignment is a string");
}

TEST(Gguf, HostileTensorsAreRefused) {
  auto one = [](const std::string& name, std::vector<uint64_t> shape, uint32_t type,
                uint64_t offset, size_t data) {
    return Builder().header(1, 0).tensor(name, shape, type, offset).pad().zeros(data).b;
  };
  EXPECT_EQ(error_of(one("t", {2, 3}, 0, 0, 24)), "no error");
  expect_refused(one("t", {2, 3}, 0, 0, 23), "past the end of the file");
  expect_refused(one("t", {2, 3}, 0, 64, 24), "past the end of the file");
  expect_refused(one("t", {2, 3}, 0, UINT64_MAX - 31, 24), "past the end of the file");
  expect_refused(one("t", {2, 3}, 0, 4, 64), "not a multiple of the alignment 32");
  expect_refused(one("t", {2, 32}, 16, 0, 1024),
                 "ggml type 16 (IQ2_XXS), which ember does not read");
  expect_refused(one("t", {2, 32}, 6, 0, 1024), "Q5_0");
  expect_refused(one("t", {2, 32}, 999, 0, 1024), "ggml type 999 (unknown)");
  expect_refused(one("t", {2, 48}, 8, 0, 1024), "rows of 48 elements, not a multiple of Q8_0's");
  expect_refused(one("t", {2, 100}, 12, 0, 1024), "not a multiple of Q4_K's block of 256");
  expect_refused(one("", {1}, 0, 0, 32), "empty name");
  expect_refused(one("t", {uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0, 32), "implausibly large");
  expect_refused(one("t", {uint64_t{1} << 20, uint64_t{1} << 20}, 0, 0, 32),
                 "past the end of the file");
  {  // n_dims 0, 5 and absurd
    for (uint32_t n : {0u, 5u, 0xffffffffu}) {
      Builder b;
      b.header(1, 0).str("t").u32(n).u64(1).u32(0).u64(0).pad().zeros(64);
      expect_refused(b.b, "dimensions (GGUF allows 1 to 4)");
    }
  }
  // two tensors of the same name; two overlapping
  expect_refused(
      Builder().header(2, 0).tensor("t", {8}, 0, 0).tensor("t", {8}, 0, 32).pad().zeros(64).b,
      "tensor 't' appears twice");
  expect_refused(
      Builder().header(2, 0).tensor("a", {16}, 0, 0).tensor("b", {8}, 0, 32).pad().zeros(96).b,
      "overlaps");
  // a zero-sized tensor is fine, and so is a gap between tensors
  EXPECT_EQ(error_of(Builder()
                         .header(2, 0)
                         .tensor("a", {0, 4}, 0, 0)
                         .tensor("b", {8}, 0, 64)
                         .pad()
                         .zeros(96)
                         .b),
            "no error");
}

// Onto a device: every tensor there, kept blocks too, dequantized and unpermuted there.
class GgufDeviceTest : public ember::testing::DeviceTest {};

TEST_P(GgufDeviceTest, LoadsOntoTheDevice) {
  io::GgufFile cpu = io::load_gguf(fixture("llama_tiny.gguf"));
  io::GgufFile dev = io::load_gguf(fixture("llama_tiny.gguf"), device());
  io::GgufFile kept = io::load_gguf(fixture("llama_tiny.gguf"), device(), {.keep_quantized = true});
  ASSERT_EQ(dev.tensors.size(), cpu.tensors.size());
  for (size_t i = 0; i < dev.tensors.size(); ++i) {
    EXPECT_EQ(dev.tensors[i].second.device(), resolve_device(device()));
    EXPECT_TRUE(tensor_equal(dev.tensors[i].second.cpu(), cpu.tensors[i].second));
  }
  io::GgufHfLlama want = io::gguf_to_hf_llama(cpu);
  io::GgufHfLlama got = io::gguf_to_hf_llama(kept);
  ASSERT_EQ(got.quantized.size(), 2u);
  for (const io::GgufTensor& q : got.quantized) {
    SCOPED_TRACE(q.name);
    EXPECT_EQ(q.blocks.device(), resolve_device(device()));
    Tensor t = io::gguf_dequantize(q);
    EXPECT_EQ(t.device(), resolve_device(device()));
    for (const auto& [name, w] : want.tensors) {
      if (name == q.name) {
        EXPECT_TRUE(tensor_equal(t.cpu(), w));
      }
    }
  }
}

EMBER_INSTANTIATE_DEVICE_TESTS(GgufDeviceTest);

}  // namespace
