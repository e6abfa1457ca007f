// tools/ember/gpt_checkpoint.cpp: the GPT's configuration and vocabulary as checkpoint metadata.
#include "gpt_checkpoint.h"

#include <cstdio>

#include "ember/error.h"
#include "ember/shape.h"

namespace ember::cli {

namespace {

const std::string& entry(const io::Metadata& m, const std::string& key, const std::string& path) {
  auto it = m.find(key);
  EMBER_CHECK_KIND(IO, it != m.end(), "[checkpoint] '", path, "' lacks '", key,
                   "': it was not written by `ember train --model gpt`");
  return it->second;
}

int64_t int_entry(const io::Metadata& m, const std::string& key, const std::string& path,
                  int64_t lo, int64_t hi) {
  const std::string& s = entry(m, key, path);
  int64_t v = 0;
  try {
    size_t used = 0;
    v = std::stoll(s, &used);
    if (used != s.size()) throw std::invalid_argument(s);
  } catch (const std::exception&) {
    EMBER_THROW(IO, "[checkpoint] '", path, "' has a malformed '", key, "': ", s);
  }
  EMBER_CHECK_KIND(IO, v >= lo && v <= hi, "[checkpoint] '", path, "' has '", key, "' ", v,
                   ", out of the range ", lo, " to ", hi, "; the file is damaged");
  return v;
}

}  // namespace

io::Metadata gpt_metadata(const GptSpec& spec) {
  std::string hex;
  for (char c : spec.vocab.chars()) {
    char byte[3];
    std::snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(c));
    hex += byte;
  }
  const GptConfig& c = spec.config;
  return {{"gpt.vocab_size", std::to_string(c.vocab_size)},
          {"gpt.block_size", std::to_string(c.block_size)},
          {"gpt.n_layer", std::to_string(c.n_layer)},
          {"gpt.n_head", std::to_string(c.n_head)},
          {"gpt.n_embd", std::to_string(c.n_embd)},
          {"gpt.dropout", std::to_string(c.dropout)},
          {"gpt.vocab_hex", hex}};
}

GptSpec gpt_spec_of(const io::Metadata& m, const std::string& path) {
  GptSpec spec;
  constexpr int64_t kMax = int64_t{1} << 30;
  spec.config.vocab_size = int_entry(m, "gpt.vocab_size", path, 1, 256);
  spec.config.block_size = int_entry(m, "gpt.block_size", path, 1, kMax);
  spec.config.n_layer = int_entry(m, "gpt.n_layer", path, 1, kMax);
  spec.config.n_head = int_entry(m, "gpt.n_head", path, 1, kMax);
  spec.config.n_embd = int_entry(m, "gpt.n_embd", path, 1, kMax);
  EMBER_CHECK_KIND(IO, spec.config.n_embd % spec.config.n_head == 0, "[checkpoint] '", path,
                   "': gpt.n_embd ", spec.config.n_embd, " is not a multiple of gpt.n_head ",
                   spec.config.n_head, "; the file is damaged");
  try {
    spec.config.dropout = std::stod(entry(m, "gpt.dropout", path));
  } catch (const std::invalid_argument&) {
    EMBER_THROW(IO, "[checkpoint] '", path, "' has a malformed 'gpt.dropout'");
  }
  const std::string& hex = entry(m, "gpt.vocab_hex", path);
  EMBER_CHECK_KIND(IO, hex.size() == 2 * static_cast<size_t>(spec.config.vocab_size),
                   "[checkpoint] '", path,
                   "': gpt.vocab_hex does not hold gpt.vocab_size characters");
  std::string chars;
  for (size_t i = 0; i < hex.size(); i += 2) {
    try {
      chars.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    } catch (const std::exception&) {
      EMBER_THROW(IO, "[checkpoint] '", path, "' has a malformed 'gpt.vocab_hex'");
    }
  }
  spec.vocab = Vocabulary::of_chars(chars);
  return spec;
}

void check_gpt_weights(const GptSpec& spec, const std::map<std::string, Shape>& shapes,
                       const std::string& path) {
  const GptConfig& c = spec.config;
  auto expect = [&](const std::string& key, int64_t value, const std::string& tensor, size_t dim) {
    auto it = shapes.find(tensor);
    EMBER_CHECK_KIND(IO, it != shapes.end(), "[checkpoint] '", path, "' has no ", tensor,
                     "; it does not hold a GPT of `ember train --model gpt`");
    EMBER_CHECK_KIND(IO, it->second.size() > dim && it->second[dim] == value, "[checkpoint] '",
                     path, "' has ", key, " ", value, " in its metadata, but ", tensor,
                     " of shape ", shape_str(it->second), "; the file is damaged");
  };
  expect("gpt.vocab_size", c.vocab_size, "model.wte.weight", 0);
  expect("gpt.n_embd", c.n_embd, "model.wte.weight", 1);
  expect("gpt.block_size", c.block_size, "model.wpe.weight", 0);
  int64_t layers = 0;
  while (shapes.count("model.h." + std::to_string(layers) + ".ln_1.weight")) ++layers;
  EMBER_CHECK_KIND(IO, layers == c.n_layer, "[checkpoint] '", path, "' has gpt.n_layer ", c.n_layer,
                   " in its metadata, but the weights of ", layers, " layers; the file is damaged");
}

}  // namespace ember::cli
