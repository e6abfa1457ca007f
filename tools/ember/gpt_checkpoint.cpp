// tools/ember/gpt_checkpoint.cpp: the GPT's configuration and vocabulary as checkpoint metadata.
#include "gpt_checkpoint.h"

#include <cstdio>

#include "ember/error.h"

namespace ember::cli {

namespace {

const std::string& entry(const io::Metadata& m, const std::string& key, const std::string& path) {
  auto it = m.find(key);
  EMBER_CHECK_KIND(IO, it != m.end(), "[checkpoint] '", path, "' lacks '", key,
                   "': it was not written by `ember train --model gpt`");
  return it->second;
}

int64_t int_entry(const io::Metadata& m, const std::string& key, const std::string& path) {
  const std::string& s = entry(m, key, path);
  try {
    return std::stoll(s);
  } catch (const std::exception&) {
    EMBER_THROW(IO, "[checkpoint] '", path, "' has a malformed '", key, "': ", s);
  }
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
  spec.config.vocab_size = int_entry(m, "gpt.vocab_size", path);
  spec.config.block_size = int_entry(m, "gpt.block_size", path);
  spec.config.n_layer = int_entry(m, "gpt.n_layer", path);
  spec.config.n_head = int_entry(m, "gpt.n_head", path);
  spec.config.n_embd = int_entry(m, "gpt.n_embd", path);
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

}  // namespace ember::cli
