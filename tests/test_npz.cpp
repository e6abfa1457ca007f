// tests/test_npz.cpp: the .npz writer and reader -- round trips stored and deflated, the archive
// layout numpy expects (members <key>.npy), and the reader's refusal of damaged archives.
#include <zip.h>

#include <string>
#include <utility>
#include <vector>

#include "ember/io/npy.h"
#include "ember/io/npz.h"
#include "io_test_util.h"

namespace ember {
namespace {

using testing::tensor_equal;
using testing::throws_error;

struct Member {
  std::string name;
  zip_int32_t method;
  zip_uint64_t size;
};

// The members of a zip file as libzip sees them.
std::vector<Member> members(const std::string& path) {
  int err = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (!za) return {};
  std::vector<Member> out;
  for (zip_int64_t i = 0; i < zip_get_num_entries(za, 0); ++i) {
    zip_stat_t st;
    zip_stat_index(za, static_cast<zip_uint64_t>(i), 0, &st);
    out.push_back({st.name, st.comp_method, st.size});
  }
  zip_discard(za);
  return out;
}

// A zip file with the given members (name, bytes), all compressed with `method`.
void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& m,
               zip_int32_t method = ZIP_CM_STORE) {
  int err = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(za, nullptr);
  for (const auto& [name, bytes] : m) {
    zip_source_t* s = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
    zip_int64_t i = zip_file_add(za, name.c_str(), s, 0);
    ASSERT_GE(i, 0);
    ASSERT_EQ(zip_set_file_compression(za, static_cast<zip_uint64_t>(i), method, 0), 0);
  }
  ASSERT_EQ(zip_close(za), 0);
}

class NpzTest : public testing::IoTest {
 protected:
  io::NamedTensors sample() const {
    return {
        {"weight", tensor({{1.5, -2.0}, {3.25, 4.0}}, on())},
        {"f64", tensor({0.1, 0.2}, on(kFloat64))},
        {"i64", tensor({-7, 8, 9}, on())},
        {"i32", tensor({1, 2}, on(kInt32))},
        {"u8", tensor({0, 255}, on(kUInt8))},
        {"mask", tensor({true, false, true}, on())},
        {"scalar", tensor(3.0, on())},
        {"empty", zeros({0, 4}, on())},
        {"zeros", zeros({1000}, on())},
        {"layer.0/bias", tensor({5.0}, on()).expand({3})},
    };
  }
};

TEST_P(NpzTest, RoundTripsStoredAndDeflated) {
  for (bool compressed : {false, true}) {
    std::string p = path(compressed ? "c.npz" : "s.npz");
    io::save_npz(p, sample(), compressed);
    io::NamedTensors back = io::load_npz(p, device());
    io::NamedTensors expected = sample();
    ASSERT_EQ(back.size(), expected.size());
    for (size_t i = 0; i < back.size(); ++i) {
      EXPECT_EQ(back[i].first, expected[i].first);
      EXPECT_EQ(back[i].second.device(), resolve_device(device()));
      EXPECT_TRUE(tensor_equal(back[i].second, expected[i].second)) << back[i].first;
    }
  }
}

TEST_P(NpzTest, MembersAreNamedNpyFilesStoredOrDeflated) {
  io::save_npz(path("s.npz"), sample(), false);
  io::save_npz(path("c.npz"), sample(), true);
  std::vector<Member> stored = members(path("s.npz")), deflated = members(path("c.npz"));
  ASSERT_EQ(stored.size(), sample().size());
  ASSERT_EQ(deflated.size(), sample().size());
  for (size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(stored[i].name, sample()[i].first + ".npy");
    EXPECT_EQ(stored[i].method, ZIP_CM_STORE);
    EXPECT_EQ(deflated[i].method, ZIP_CM_DEFLATE);
  }
  // Each member is exactly what save_npy writes: "zeros" is a 128-byte header and 4000 bytes.
  EXPECT_EQ(stored[8].size, 128u + 4000u);
  io::save_npy(path("zeros.npy"), zeros({1000}));
  EXPECT_EQ(stored[8].size, read(path("zeros.npy")).size());
  EXPECT_LT(std::filesystem::file_size(path("c.npz")), 2000u);
  EXPECT_GT(std::filesystem::file_size(path("s.npz")), 4000u);
}

TEST_P(NpzTest, EmptyArchive) {
  io::save_npz(path("e.npz"), {});
  EXPECT_EQ(read(path("e.npz")), std::string("PK\x05\x06", 4) + std::string(18, '\0'));
  EXPECT_TRUE(io::load_npz(path("e.npz"), device()).empty());
}

TEST_P(NpzTest, ReadsArchivesWrittenByOtherTools) {
  // Members written by libzip directly, deflated, with a Fortran-order array inside.
  std::string npy = read([&] {
    io::save_npy(path("x.npy"), tensor({1, 2, 3}, on(kInt32)));
    return path("x.npy");
  }());
  write_zip(path("o.npz"), {{"x.npy", npy}, {"y.npy", npy}}, ZIP_CM_DEFLATE);
  io::NamedTensors back = io::load_npz(path("o.npz"), device());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].first, "x");
  EXPECT_EQ(back[1].first, "y");
  EXPECT_TRUE(tensor_equal(back[1].second, tensor({1, 2, 3}, {.dtype = kInt32})));
}

TEST_P(NpzTest, RefusesBadArchives) {
  auto bad = [&](const std::string& p, std::vector<std::string> fragments) {
    fragments.insert(fragments.begin(), "[load_npz] '" + p + "' is not a valid .npz file: ");
    return throws_error([&] { io::load_npz(p, device()); }, ErrorKind::IO, fragments);
  };
  EXPECT_TRUE(bad(write("empty.npz", ""), {"the file is empty"}));
  EXPECT_TRUE(bad(write("text.npz", "not a zip file at all"), {"not a zip archive"}));

  std::string npy = "\x93NUMPY\x01";
  write_zip(path("notnpy.npz"), {{"readme.txt", "hello"}});
  EXPECT_TRUE(bad(path("notnpy.npz"), {"member 'readme.txt' is not a .npy array"}));

  write_zip(path("badnpy.npz"), {{"w.npy", "\x93NUMPY junk"}});
  EXPECT_TRUE(throws_error([&] { io::load_npz(path("badnpy.npz")); }, ErrorKind::IO,
                           {"[load_npz] '" + path("badnpy.npz") +
                            ":w.npy' is not a valid .npy file: unsupported format version"}));

  // A flipped data byte in a stored member: the CRC check catches it.
  io::save_npz(path("crc.npz"), {{"a", tensor({1.0, 2.0, 3.0})}});
  std::string bytes = read(path("crc.npz"));
  size_t at = bytes.find("\x93NUMPY");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 128] ^= 0x40;
  EXPECT_TRUE(bad(write("crc.npz", bytes), {"member 'a.npy' is corrupt: CRC error"}));

  // Cut short: the central directory is gone.
  io::save_npz(path("cut.npz"), sample(), true);
  bytes = read(path("cut.npz"));
  EXPECT_TRUE(bad(write("cut.npz", bytes.substr(0, bytes.size() / 2)), {"not a zip archive"}));

  write_zip(path("bz.npz"), {{"a.npy", std::string(100, 'x')}}, ZIP_CM_BZIP2);
  ASSERT_EQ(members(path("bz.npz")).at(0).method, ZIP_CM_BZIP2);
  EXPECT_TRUE(bad(path("bz.npz"), {"member 'a.npy' uses compression method 12"}));
}

TEST_P(NpzTest, RefusesBadNames) {
  EXPECT_TRUE(throws_error(
      [&] {
        io::save_npz(path("d.npz"), {{"a", ones({1})}, {"a", ones({2})}});
      },
      ErrorKind::Value, {"[save_npz] duplicate tensor name 'a'"}));
  EXPECT_TRUE(throws_error(
      [&] {
        io::save_npz(path("d.npz"), {{"", ones({1})}});
      },
      ErrorKind::Value, {"[save_npz] a tensor has an empty name"}));
  EXPECT_FALSE(std::filesystem::exists(path("d.npz")));
}

EMBER_INSTANTIATE_DEVICE_TESTS(NpzTest);

}  // namespace
}  // namespace ember
