// Tests of io::load_hf_weights: a Hugging Face folder's weights as model.safetensors,
// pytorch_model.bin, or either sharded with an index; the preference order; and indices that
// must be refused (shards outside the folder, missing names, names twice, no weights).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "ember/ember.h"
#include "ember/io/hf_weights.h"
#include "ember/io/safetensors.h"

namespace {

using namespace ember;
namespace fs = std::filesystem;

std::string reference(const std::string& name) {
  std::string path = EMBER_REFERENCE_DIR;
  path += '/';
  path += name;
  return path;
}

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("hf_weights_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Same dtype, sizes and values.
bool same(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  Tensor x = a.to(kFloat64).contiguous(), y = b.to(kFloat64).contiguous();
  return std::equal(x.data_ptr<double>(), x.data_ptr<double>() + x.numel(), y.data_ptr<double>());
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string error_of(const fs::path& dir) {
  try {
    io::load_hf_weights(dir.string());
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(HfWeights, ShardedPytorchModelBinEqualsModelSafetensors) {
  io::HfWeights bin = io::load_hf_weights(reference("fixtures/tiny_bert_bin"));
  io::NamedTensors st = io::load_safetensors(reference("tiny_bert/model.safetensors")).tensors;
  ASSERT_EQ(bin.files.size(), 2u);
  ASSERT_EQ(bin.tensors.size(), st.size());
  for (const auto& [name, t] : st) {
    auto it = std::find_if(bin.tensors.begin(), bin.tensors.end(),
                           [&](const auto& p) { return p.first == name; });
    ASSERT_NE(it, bin.tensors.end()) << name;
    EXPECT_TRUE(same(it->second, t)) << name;
  }
}

TEST(HfWeights, ShardedSafetensorsAndThePreferenceOrder) {
  fs::path d = fresh_dir("sharded");
  Tensor a = arange(6, {.dtype = kFloat32}).reshape({2, 3}), b = ones({4}, {.dtype = kBFloat16});
  io::save_safetensors((d / "model-00001-of-00002.safetensors").string(), {{"a", a}});
  io::save_safetensors((d / "model-00002-of-00002.safetensors").string(), {{"b", b}});
  write(d / "model.safetensors.index.json",
        R"({"metadata": {"total_size": 32}, "weight_map": {"a": "model-00001-of-00002.safetensors",
            "b": "model-00002-of-00002.safetensors"}})");
  io::HfWeights w = io::load_hf_weights(d.string());
  ASSERT_EQ(w.tensors.size(), 2u);
  EXPECT_EQ(w.tensors[0].first, "a");
  EXPECT_TRUE(same(w.tensors[0].second, a));
  EXPECT_EQ(w.tensors[1].second.dtype(), kBFloat16);
  // a single pytorch_model.bin beside them is not taken: safetensors come first
  fs::copy_file(reference("fixtures/pt/state_dict.pt"), d / "pytorch_model.bin");
  EXPECT_EQ(io::load_hf_weights(d.string()).tensors.size(), 2u);
  // and a single model.safetensors before an index
  io::save_safetensors((d / "model.safetensors").string(), {{"c", a}});
  EXPECT_EQ(io::load_hf_weights(d.string()).tensors[0].first, "c");
  fs::remove(d / "model.safetensors");
  fs::remove(d / "model.safetensors.index.json");
  EXPECT_EQ(io::load_hf_weights(d.string()).tensors[0].first, "0.weight");
}

TEST(HfWeights, BadIndicesAreRefused) {
  fs::path d = fresh_dir("bad");
  EXPECT_NE(error_of(d).find("has none of model.safetensors"), std::string::npos);
  io::save_safetensors((d / "s1.safetensors").string(), {{"a", zeros({2})}});
  io::save_safetensors((d / "s2.safetensors").string(), {{"a", zeros({2})}});
  const auto index = [&](const std::string& map) {
    write(d / "model.safetensors.index.json", R"({"weight_map": )" + map + "}");
    return error_of(d);
  };
  EXPECT_NE(index(R"({"a": "../s1.safetensors"})").find("not a file of the folder"),
            std::string::npos);
  EXPECT_NE(index(R"({"a": "/etc/passwd"})").find("not a file of the folder"), std::string::npos);
  EXPECT_NE(index(R"({"a": "s3.safetensors"})").find("which is not in the folder"),
            std::string::npos);
  EXPECT_NE(index(R"({"a": "s1.safetensors", "b": "s1.safetensors"})")
                .find("puts 'b' in 's1.safetensors', which lacks it"),
            std::string::npos);
  EXPECT_NE(index(R"({"a": "s1.safetensors", "x": "s2.safetensors"})").find("is in two shards"),
            std::string::npos);
  EXPECT_NE(index(R"({})").find("weight_map is empty"), std::string::npos);
  EXPECT_NE(index(R"([1, 2])").find("has no \"weight_map\""), std::string::npos);
  write(d / "model.safetensors.index.json", "{not json");
  EXPECT_NE(error_of(d).find("is not valid JSON"), std::string::npos);
}

}  // namespace
