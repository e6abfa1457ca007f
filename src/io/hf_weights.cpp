// io/hf_weights.cpp: a Hugging Face folder's weights, single-file or sharded, safetensors or
// pytorch_model.bin (ember/io/hf_weights.h).
#include "ember/io/hf_weights.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ember/error.h"
#include "ember/io/pt.h"
#include "ember/io/safetensors.h"

namespace ember::io {

namespace {

namespace fs = std::filesystem;

// An index larger than this is not an index (a 1000-shard model's is ~100 KB per 1000 names).
constexpr uintmax_t kMaxIndexBytes = uintmax_t{64} << 20;

NamedTensors read_file(const fs::path& file, Device device) {
  if (file.extension() == ".safetensors") return load_safetensors(file.string(), device).tensors;
  return load_pt(file.string(), device).to_named_tensors();
}

HfWeights read_index(const fs::path& dir, const fs::path& index, Device device) {
  const auto bad = [&](const std::string& what) {
    EMBER_THROW(IO, "[load_hf_weights] ", index.string(), ": ", what);
  };
  std::error_code ec;
  const uintmax_t size = fs::file_size(index, ec);
  if (ec) bad("cannot be read (" + ec.message() + ")");
  if (size > kMaxIndexBytes) bad("is " + std::to_string(size) + " bytes; an index is far smaller");
  std::ifstream in(index, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json = nlohmann::json::parse(text.str(), nullptr, false);
  if (json.is_discarded()) bad("is not valid JSON");
  if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object())
    bad("has no \"weight_map\" object (name -> shard file)");

  // The shards in the order the map first names them, and the names each must hold.
  std::vector<std::string> shards;
  std::map<std::string, std::set<std::string>> wanted;
  for (const auto& [name, file] : json["weight_map"].items()) {
    if (!file.is_string()) bad("weight_map[\"" + name + "\"] is not a file name");
    const std::string f = file.get<std::string>();
    if (f.empty() || f.find('/') != std::string::npos || f.find('\\') != std::string::npos ||
        f == "." || f == "..")
      bad("weight_map[\"" + name + "\"] names '" + f +
          "', not a file of the folder (shards sit next to their index)");
    if (!wanted.count(f)) shards.push_back(f);
    wanted[f].insert(name);
  }
  if (shards.empty()) bad("its weight_map is empty");

  HfWeights out;
  std::set<std::string> seen;
  for (const std::string& shard : shards) {
    const fs::path file = dir / shard;
    if (!fs::is_regular_file(file)) bad("names shard '" + shard + "', which is not in the folder");
    NamedTensors tensors = read_file(file, device);
    std::set<std::string>& names = wanted[shard];
    for (auto& [name, t] : tensors) {
      if (!seen.insert(name).second)
        bad("tensor '" + name + "' is in two shards (the second: '" + shard + "')");
      names.erase(name);
      out.tensors.emplace_back(std::move(name), std::move(t));
    }
    if (!names.empty())
      bad("weight_map puts '" + *names.begin() + "' in '" + shard + "', which lacks it");
    out.files.push_back(file.string());
  }
  return out;
}

}  // namespace

HfWeights load_hf_weights(const std::string& dir, Device device) {
  const fs::path d(dir);
  EMBER_CHECK_KIND(IO, fs::is_directory(d), "[load_hf_weights] ", dir, " is not a directory");
  for (const char* single : {"model.safetensors", "pytorch_model.bin"}) {
    const fs::path index = d / (std::string(single) + ".index.json");
    if (fs::exists(d / single)) {
      HfWeights out;
      out.tensors = read_file(d / single, device);
      out.files.push_back((d / single).string());
      return out;
    }
    if (fs::exists(index)) return read_index(d, index, device);
  }
  EMBER_THROW(IO, "[load_hf_weights] ", dir,
              " has none of model.safetensors, model.safetensors.index.json, pytorch_model.bin, "
              "pytorch_model.bin.index.json (the files save_pretrained writes)");
}

}  // namespace ember::io
