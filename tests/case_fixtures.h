// tests/case_fixtures.h: the reader of the module fixtures PyTorch scripts in tests/reference
// write (rnn_reference.txt, transformer_reference.txt): cases of `case NAME key=value ...`, one
// tensor per line `NAME SHAPE VALUES...` (shape "2x3", or "scalar"), then `end`.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ember/ember.h"

namespace ember::testing {

// One case: its options and its named tensors (float64, CPU) in file order.
struct Fixture {
  std::string name;
  std::map<std::string, std::string> options;
  std::vector<std::pair<std::string, Tensor>> tensors;

  bool has(const std::string& key) const { return find(key) != nullptr; }
  const Tensor* find(const std::string& key) const {
    for (const auto& [k, t] : tensors)
      if (k == key) return &t;
    return nullptr;
  }
  Tensor get(const std::string& key) const {
    const Tensor* t = find(key);
    EXPECT_TRUE(t) << name << " lacks " << key;
    return t ? *t : Tensor();
  }
  int64_t num(const std::string& key, int64_t fallback) const {
    auto it = options.find(key);
    return it == options.end() ? fallback : std::stoll(it->second);
  }
  std::string text(const std::string& key, const std::string& fallback) const {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second;
  }
};

// "NAME 2x3 v1 v2 ..." -> (NAME, tensor).
inline std::pair<std::string, Tensor> parse_tensor(const std::string& line) {
  std::istringstream in(line);
  std::string name, shape_text, word;
  in >> name >> shape_text;
  Shape shape;
  if (shape_text != "scalar") {
    std::istringstream dims(shape_text);
    while (std::getline(dims, word, 'x')) shape.push_back(std::stoll(word));
  }
  std::vector<double> values;
  while (in >> word) values.push_back(std::stod(word));
  return {name, from_vector(values, shape)};
}

// The cases of tests/reference/FILE.
inline std::vector<Fixture> read_case_fixtures(const std::string& file) {
  std::ifstream in(std::string(EMBER_REFERENCE_DIR) + "/" + file);
  EXPECT_TRUE(in) << "cannot read tests/reference/" << file;
  std::vector<Fixture> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("case ", 0) == 0) {
      std::istringstream words(line.substr(5));
      Fixture f;
      words >> f.name;
      std::string kv;
      while (words >> kv) {
        size_t eq = kv.find('=');
        f.options[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      cases.push_back(f);
    } else if (line != "end" && !cases.empty()) {
      cases.back().tensors.push_back(parse_tensor(line));
    }
  }
  return cases;
}

}  // namespace ember::testing
