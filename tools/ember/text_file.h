// tools/ember/text_file.h: a small file's whole text (a config.json, a tokenizer.json), with an
// IO error naming the command and the file when it cannot be read.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "ember/error.h"

namespace ember::cli {

inline std::string read_text_file(const std::string& path, const char* op) {
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK_KIND(IO, in.good(), "[", op, "] cannot read ", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace ember::cli
