// tests/test_safetensors.cpp: the safetensors writer and reader -- round trips of every dtype and
// device, metadata, atomic writes, and the reader's refusal of malformed files.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "ember/io/safetensors.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_equal;
using testing::throws_error;

class SafetensorsTest : public testing::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    static int counter = 0;
    dir_ = (std::filesystem::temp_directory_path() /
            ("ember_safetensors_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const {
    return (std::filesystem::path(dir_) / name).string();
  }

  // Writes a file with the given JSON header and `data_bytes` zero bytes of data.
  std::string raw(const std::string& name, const std::string& json, size_t data_bytes) const {
    std::string p = path(name);
    std::ofstream out(p, std::ios::binary);
    uint64_t n = json.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << json << std::string(data_bytes, '\0');
    return p;
  }

  std::string dir_;
};

TEST_P(SafetensorsTest, RoundTripsEveryDtypeAndMetadata) {
  io::NamedTensors tensors{
      {"f32", tensor({{1.5, -2.0}, {3.25, 4.0}}, on())},
      {"f64", tensor({0.1, 0.2}, on(kFloat64))},
      {"i64", tensor({-7, 8, 9}, on())},
      {"i32", tensor({1, 2}, on(kInt32))},
      {"u8", tensor({0, 255}, on(kUInt8))},
      {"b", tensor({true, false, true}, on())},
      {"scalar", tensor(3.0, on())},
      {"empty", zeros({0, 4}, on())},
  };
  io::save_safetensors(path("a.safetensors"), tensors, {{"epoch", "3"}, {"who", "ember"}});
  io::SafetensorsFile f = io::load_safetensors(path("a.safetensors"), device());
  ASSERT_EQ(f.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    auto it =
        std::find_if(f.tensors.begin(), f.tensors.end(), [&](auto& p) { return p.first == name; });
    ASSERT_NE(it, f.tensors.end()) << name;
    EXPECT_TRUE(tensor_equal(it->second, t)) << name;
    EXPECT_EQ(it->second.device(), t.device()) << name;
  }
  EXPECT_EQ(f.metadata.at("epoch"), "3");
  EXPECT_EQ(f.metadata.at("who"), "ember");
}

TEST_P(SafetensorsTest, NonContiguousTensorsAreWrittenInLogicalOrder) {
  Tensor t = arange(6, on(kFloat32)).reshape({2, 3}).t();
  io::save_safetensors(path("t.safetensors"), {{"t", t}});
  EXPECT_TRUE(tensor_equal(io::load_safetensors(path("t.safetensors")).tensors[0].second,
                           t.cpu().contiguous()));
}

TEST_P(SafetensorsTest, WritesAtomicallyWithoutLeftovers) {
  io::save_safetensors(path("x.safetensors"), {{"a", ones({3}, on())}});
  io::save_safetensors(path("x.safetensors"), {{"a", zeros({3}, on())}});
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir_)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
  EXPECT_TRUE(
      tensor_equal(io::load_safetensors(path("x.safetensors")).tensors[0].second, zeros({3})));
  EXPECT_TRUE(throws_error(
      [&] {
        io::save_safetensors(path("no/such/dir/x.safetensors"), {{"a", ones({1})}});
      },
      ErrorKind::IO, {"cannot create"}));
  EXPECT_TRUE(throws_error(
      [&] {
        io::save_safetensors(path("d.safetensors"), {{"a", ones({1})}, {"a", ones({1})}});
      },
      ErrorKind::Value, {"duplicate tensor name 'a'"}));
}

TEST_P(SafetensorsTest, MalformedFilesAreRefusedWithTheReason) {
  auto refuses = [&](const std::string& file, const std::string& why) {
    return throws_error([&] { io::load_safetensors(file); }, ErrorKind::IO, {file, why});
  };
  EXPECT_TRUE(
      throws_error([&] { io::load_safetensors(path("missing")); }, ErrorKind::IO, {"cannot open"}));
  {
    std::ofstream(path("short"), std::ios::binary) << "abc";
    EXPECT_TRUE(refuses(path("short"), "shorter than the 8-byte header"));
  }
  {
    std::string p = path("huge");
    std::ofstream out(p, std::ios::binary);
    uint64_t n = 200ull << 20;
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out.close();
    EXPECT_TRUE(refuses(p, "over 100 MB"));
  }
  {
    std::string p = path("past");
    std::ofstream out(p, std::ios::binary);
    uint64_t n = 1000;
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << "{}";
    out.close();
    EXPECT_TRUE(refuses(p, "runs past the end"));
  }
  EXPECT_TRUE(refuses(raw("json", "{not json", 0), "invalid JSON"));
  EXPECT_TRUE(refuses(raw("utf8", "{\"\xff\xfe\":1}", 0), "invalid JSON or UTF-8"));
  EXPECT_TRUE(refuses(raw("dtype", R"({"a":{"dtype":"I16","shape":[1],"data_offsets":[0,2]}})", 2),
                      "unsupported dtype"));
  EXPECT_TRUE(refuses(raw("size", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4),
                      "need 8"));
  EXPECT_TRUE(refuses(raw("end", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4),
                      "past the end"));
  EXPECT_TRUE(refuses(
      raw("overlap",
          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
          8),
      "overlaps"));
  EXPECT_TRUE(refuses(raw("gap", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
                      "gap before tensor 'a'"));
  EXPECT_TRUE(refuses(raw("unused", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8),
                      "no tensor uses"));
  EXPECT_TRUE(refuses(
      raw("dup",
          R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
          2),
      "duplicate tensor name 'a'"));
  EXPECT_TRUE(refuses(raw("meta", R"({"__metadata__":{"k":3}})", 0), "not a string"));
  EXPECT_TRUE(refuses(raw("neg", R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}})", 0),
                      "negative or non-integer"));
  EXPECT_TRUE(
      refuses(raw("fields", R"({"a":{"dtype":"U8"}})", 0), "lacks dtype, shape or data_offsets"));
  // 2^61 float64s are 2^64 bytes: a byte count that would wrap to 0 and pass for empty.
  EXPECT_TRUE(refuses(
      raw("wrap", R"({"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}})", 0),
      "tensor 'a' has an implausibly large shape"));
  EXPECT_TRUE(refuses(
      raw("huge0", R"({"a":{"dtype":"U8","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}})",
          0),
      "tensor 'a' has an implausibly large shape"));
}

TEST_P(SafetensorsTest, BoolBytesOtherThanZeroAndOneReadAsTrue) {
  std::string p = raw("b", R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})", 0);
  std::ofstream(p, std::ios::binary | std::ios::app) << std::string("\x00\x07\x01", 3);
  io::SafetensorsFile f = io::load_safetensors(p, device());
  EXPECT_TRUE(tensor_equal(f.tensors.at(0).second, tensor({false, true, true})));
}

TEST_P(SafetensorsTest, LargeFilesLoadThroughAMemoryMap) {
  // 18 MB of float32, over the 16 MiB threshold at which the reader maps the file.
  Tensor big = arange(4500000, on(kFloat32)).reshape({1500, 3000});
  io::save_safetensors(path("big.safetensors"), {{"big", big}, {"small", tensor({1, 2}, on())}});
  io::SafetensorsFile f = io::load_safetensors(path("big.safetensors"), device());
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_TRUE(tensor_equal(f.tensors[0].second, big));
  EXPECT_TRUE(tensor_equal(f.tensors[1].second, tensor({1, 2})));
}

EMBER_INSTANTIATE_DEVICE_TESTS(SafetensorsTest);

}  // namespace
}  // namespace ember
