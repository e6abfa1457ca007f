// tests/test_file_bytes.cpp: the readers' whole-file access -- read into memory below the
// threshold, memory-mapped at or above it, and clear errors for what is not a readable file.
#include <fstream>
#include <string>

#include "io/file_bytes.h"
#include "io_test_util.h"

namespace ember {
namespace {

using io::detail::FileBytes;
using testing::throws_error;

class FileBytesTest : public testing::IoTest {};

TEST_P(FileBytesTest, ReadsSmallFilesAndMapsLargeOnes) {
  std::string content = "0123456789abcdef";
  std::string p = write("f.bin", content);
  FileBytes read_in(p, "test");
  EXPECT_FALSE(read_in.mapped());
  ASSERT_EQ(read_in.size(), content.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(read_in.data()), read_in.size()), content);

  FileBytes mapped(p, "test", /*map_threshold=*/16);
  EXPECT_TRUE(mapped.mapped());
  ASSERT_EQ(mapped.size(), content.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(mapped.data()), mapped.size()), content);

  std::string big(FileBytes::kMapThreshold, 'x');
  FileBytes big_file(write("big.bin", big), "test");
  EXPECT_TRUE(big_file.mapped());
  EXPECT_EQ(big_file.size(), big.size());
  EXPECT_EQ(big_file.data()[big.size() - 1], 'x');
}

TEST_P(FileBytesTest, EmptyFilesAndErrors) {
  FileBytes empty(write("empty.bin", ""), "test", 0);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_FALSE(empty.mapped());
  EXPECT_NE(empty.data(), nullptr);
  EXPECT_TRUE(throws_error([&] { FileBytes(path("none"), "load_x"); }, ErrorKind::IO,
                           {"[load_x] cannot open '" + path("none") + "': No such file"}));
  EXPECT_TRUE(throws_error([&] { FileBytes(dir_, "load_x"); }, ErrorKind::IO,
                           {"[load_x] '" + dir_ + "' is not a regular file"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(FileBytesTest);

}  // namespace
}  // namespace ember
