// tests/test_npy.cpp: the .npy writer and reader -- round trips of every dtype and device, the
// exact bytes numpy expects, versions 2.0 and 3.0, Fortran order, big-endian data, and the
// reader's refusal of malformed files.
#include <string>

#include "ember/io/npy.h"
#include "io_test_util.h"

namespace ember {
namespace {

using testing::tensor_equal;
using testing::throws_error;

// A .npy file with the given version, header dict and data; the header is padded as numpy does.
std::string npy_file(int major, const std::string& dict, const std::string& data) {
  size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < preamble - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

template <class T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

class NpyTest : public testing::IoTest {};

TEST_P(NpyTest, RoundTripsEveryDtypeAndShape) {
  std::vector<Tensor> tensors{
      tensor({{1.5, -2.0, 3.0}, {3.25, 4.0, -0.0}}, on()),
      tensor({0.1, 1e300}, on(kFloat64)),
      tensor({-7, 8, 9, int64_t{1} << 40}, on()),
      tensor({{1, -2}, {2147483647, -2147483647 - 1}}, on(kInt32)),
      tensor({0, 255, 7}, on(kUInt8)),
      tensor({true, false, true}, on()),
      tensor(3.0, on()),
      zeros({0, 4}, on(kInt64)),
      arange(24, on(kFloat32)).reshape({2, 3, 4}).permute({2, 0, 1}),  // not contiguous
  };
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string p = path(std::to_string(i) + ".npy");
    io::save_npy(p, tensors[i]);
    Tensor back = io::load_npy(p, device());
    EXPECT_EQ(back.device(), resolve_device(device()));
    EXPECT_TRUE(back.is_contiguous());
    EXPECT_TRUE(tensor_equal(back, tensors[i])) << "tensor " << i;
  }
}

TEST_P(NpyTest, WritesVersion1HeaderAsNumpyDoes) {
  std::string p = path("a.npy");
  io::save_npy(p, tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on()));
  std::string expected = npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                  bytes_of<float>({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(read(p), expected);
  EXPECT_EQ(expected.size(), 128u + 24u);

  io::save_npy(p, tensor({true, false}, on()));
  EXPECT_EQ(read(p), npy_file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                              std::string("\x01\x00", 2)));
  io::save_npy(p, tensor(int64_t{5}, on()));
  EXPECT_EQ(read(p), npy_file(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                              bytes_of<int64_t>({5})));
}

TEST_P(NpyTest, WritesVersion2WhenTheHeaderIsOver64KiB) {
  std::string p = path("many_dims.npy");
  // "1, " x 22000 is over 65535 header bytes. (Only empty() makes such a tensor: the CPU
  // kernels take at most 25 dimensions.)
  Tensor t = empty(Shape(22000, 1), {.dtype = kInt32});
  *t.data_ptr<int32_t>() = 42;
  io::save_npy(p, t.to(device()));
  std::string bytes = read(p);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ(bytes.size() % 64, 4u);
  Tensor back = io::load_npy(p);
  EXPECT_EQ(back.dim(), 22000);
  EXPECT_EQ(back.numel(), 1);
  EXPECT_EQ(*back.data_ptr<int32_t>(), 42);
}

TEST_P(NpyTest, ReadsVersions2And3) {
  std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  Tensor expected = tensor({7, -8, 9}, {.dtype = kInt32});
  for (int major : {2, 3}) {
    std::string p = write("v.npy", npy_file(major, dict, bytes_of<int32_t>({7, -8, 9})));
    EXPECT_TRUE(tensor_equal(io::load_npy(p, device()), expected)) << "version " << major;
  }
}

TEST_P(NpyTest, ReadsFortranOrder) {
  // [[1, 2, 3], [4, 5, 6]] stored column by column.
  std::string p = write("f.npy", npy_file(1,
                                          "{'descr': '<f8', 'fortran_order': True, "
                                          "'shape': (2, 3), }",
                                          bytes_of<double>({1, 4, 2, 5, 3, 6})));
  EXPECT_TRUE(tensor_equal(io::load_npy(p, device()),
                           tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, {.dtype = kFloat64})));
  // 3-D: element (i, j, k) at i + 2 j + 4 k.
  std::string data;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) data += bytes_of<int64_t>({100 * i + 10 * j + k});
  p = write("f3.npy",
            npy_file(1, "{'descr': '<i8', 'fortran_order': True, 'shape': (2, 2, 2), }", data));
  EXPECT_TRUE(tensor_equal(io::load_npy(p, device()),
                           tensor({{{0, 1}, {10, 11}}, {{100, 101}, {110, 111}}})));
}

TEST_P(NpyTest, ReadsBigEndian) {
  std::string p = write("be.npy", npy_file(1,
                                           "{'descr': '>i4', 'fortran_order': False, "
                                           "'shape': (2,), }",
                                           std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8)));
  EXPECT_TRUE(tensor_equal(io::load_npy(p, device()), tensor({258, -2}, {.dtype = kInt32})));
  // 1.0 as a big-endian double is 3f f0 00 ...
  p = write("be8.npy", npy_file(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }",
                                std::string("\x3f\xf0\0\0\0\0\0\0", 8)));
  EXPECT_TRUE(tensor_equal(io::load_npy(p, device()), tensor({1.0}, {.dtype = kFloat64})));
}

TEST_P(NpyTest, AcceptsHeaderVariants) {
  // Keys in another order, double quotes, Python 2 longs, no trailing comma.
  std::string p = write("v.npy", npy_file(1,
                                          "{\"shape\": (2L, 1L), \"fortran_order\": False, "
                                          "\"descr\": \"|u1\"}",
                                          "\x05\x06"));
  EXPECT_TRUE(tensor_equal(io::load_npy(p), tensor({{5}, {6}}, {.dtype = kUInt8})));
  // Booleans that are not 0/1 bytes read as true.
  p = write("b.npy", npy_file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                              std::string("\x00\x02\x01", 3)));
  EXPECT_TRUE(tensor_equal(io::load_npy(p), tensor({false, true, true})));
}

TEST_P(NpyTest, RefusesMalformedFiles) {
  auto bad = [&](const std::string& bytes, const std::string& fragment) {
    std::string p = write("bad.npy", bytes);
    return throws_error([&] { io::load_npy(p, device()); }, ErrorKind::IO,
                        {"[load_npy] '" + p + "' is not a valid .npy file: ", fragment});
  };
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string two = bytes_of<float>({1, 2});
  EXPECT_TRUE(bad("", "shorter than the 10-byte .npy preamble"));
  EXPECT_TRUE(bad("\x93NUMPY\x01", "shorter than the 10-byte"));
  EXPECT_TRUE(bad("PK\x03\x04 not an npy file", "bad magic"));
  EXPECT_TRUE(bad("\x80\x04\x95 pickled", "it is a Python pickle, not a .npy file"));
  EXPECT_TRUE(bad(npy_file(1, f4, two).replace(6, 1, "\x04"), "unsupported format version 4.0"));
  EXPECT_TRUE(bad(npy_file(1, f4, two).replace(7, 1, "\x01"), "unsupported format version 1.1"));
  EXPECT_TRUE(bad(npy_file(1, f4, two).replace(8, 2, "\xff\x7f"),
                  "the header length 32767 runs past the end of the file"));
  EXPECT_TRUE(bad(npy_file(1, f4, two).substr(0, 134),
                  "the shape (2,) needs 8 bytes of data but "
                  "only 6 follow (truncated?)"));
  EXPECT_TRUE(bad(npy_file(1, f4, two + "xy"), "2 bytes of extra data after the 8 its shape (2,)"));
  EXPECT_TRUE(bad(npy_file(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
                           std::string(16, '\0')),
                  "object arrays (descr '|O') hold pickled Python objects"));
  EXPECT_TRUE(bad(npy_file(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", "abcd"),
                  "unsupported dtype '<i2'"));
  EXPECT_TRUE(
      bad(npy_file(1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", "abcd"),
          "structured dtypes (a list descr) are not supported"));
  EXPECT_TRUE(bad(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", two),
                  "the shape is not a tuple: (n) needs a comma"));
  EXPECT_TRUE(bad(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", two),
                  "negative dimension"));
  EXPECT_TRUE(bad(npy_file(1, "{'descr': '<f4', 'fortran_order': False}", two),
                  "the header lacks the key 'shape'"));
  EXPECT_TRUE(bad(npy_file(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", two),
                  "fortran_order is not True or False"));
  EXPECT_TRUE(bad(npy_file(1, "{'descr': '<f4', 'descr': '<f4', 'shape': (2,)}", two),
                  "the header repeats the key 'descr'"));
  EXPECT_TRUE(
      bad(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", two),
          "unexpected key 'x' in the header"));
  EXPECT_TRUE(bad(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", two),
                  "unexpected text after the header dict"));
  EXPECT_TRUE(bad(npy_file(1, "['descr', '<f4']", two), "the header does not start with '{'"));
  EXPECT_TRUE(bad(npy_file(1, "{'descr': '<f4", two), "unterminated string in the header"));
  EXPECT_TRUE(bad(npy_file(1,
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999"
                           "999,), }",
                           two),
                  "a dimension of the shape is implausibly large"));
  EXPECT_TRUE(bad(npy_file(1,
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
                           "4294967296), }",
                           two),
                  "the shape (4294967296, 4294967296) is too large"));
}

TEST_P(NpyTest, ReportsMissingFiles) {
  EXPECT_TRUE(throws_error(
      [&] { io::load_npy(path("none.npy")); }, ErrorKind::IO,
      {"[load_npy] cannot open '" + path("none.npy") + "'", "No such file or directory"}));
  EXPECT_TRUE(throws_error([&] { io::load_npy(dir_); }, ErrorKind::IO,
                           {"[load_npy] '" + dir_ + "' is not a regular file"}));
}

TEST_P(NpyTest, WritesAtomically) {
  std::string p = path("a.npy");
  io::save_npy(p, ones({3}, on()));
  for (const auto& entry : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename(), "a.npy");
}

EMBER_INSTANTIATE_DEVICE_TESTS(NpyTest);

}  // namespace
}  // namespace ember
