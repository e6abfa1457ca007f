// tests/test_fuzz_corpus.cpp: replays the fuzzers' committed corpus (fuzz/corpus/<reader>/)
// through the same byte-fed readers the fuzz targets call -- under the ASan+UBSan build in CI. A
// file named valid_* must load, invalid_* must be refused with an ember::Error, and any other
// (inputs the fuzzers once crashed on) must do either without crashing.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "readers.h"
#include "test_util.h"

namespace ember {
namespace {

using fuzz::Outcome;

struct Reader {
  const char* name;
  Outcome (*read)(const uint8_t*, size_t);
};

class FuzzCorpusTest : public ::testing::TestWithParam<Reader> {};

TEST_P(FuzzCorpusTest, EveryFileLoadsOrIsRefused) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(EMBER_FUZZ_CORPUS_DIR) / GetParam().name;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  int valid = 0, invalid = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    Outcome outcome = GetParam().read(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    std::string name = file.filename().string();
    if (name.rfind("valid_", 0) == 0) {
      ++valid;
      EXPECT_EQ(outcome, Outcome::Loaded) << file;
    } else if (name.rfind("invalid_", 0) == 0) {
      ++invalid;
      EXPECT_EQ(outcome, Outcome::Refused) << file;
    }
  }
  EXPECT_GE(valid, 2) << "the corpus should hold valid files";
  EXPECT_GE(invalid, 2) << "the corpus should hold invalid files";
}

INSTANTIATE_TEST_SUITE_P(
    Readers, FuzzCorpusTest,
    ::testing::Values(Reader{"safetensors", fuzz::read_safetensors}, Reader{"npy", fuzz::read_npy},
                      Reader{"npz", fuzz::read_npz}, Reader{"idx", fuzz::read_idx},
                      Reader{"pickle", fuzz::read_pickle}, Reader{"pt", fuzz::read_pt},
                      Reader{"gguf", fuzz::read_gguf}),
    [](const ::testing::TestParamInfo<Reader>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ember
