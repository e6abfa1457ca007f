// data/idx_file.cpp: the IDX reader -- zlib's gz* functions read gzip and plain files alike
// (without zlib, data/gz_fallback.h reads plain files only).
#include "data/idx_file.h"

#if defined(EMBER_NO_ZLIB)
#include "data/gz_fallback.h"
#else
#include <zlib.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "ember/creation.h"

namespace ember::data::detail {

namespace {

constexpr int64_t kMaxIdxBytes = int64_t{1} << 40;
constexpr unsigned kChunk = 1u << 30;  // gzread takes an unsigned count
constexpr int64_t kMaxDeflateRatio = 1032;

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

// Reads up to n bytes; returns how many arrived (fewer only at the end of the data).
int64_t read_bytes(gzFile f, void* out, int64_t n, const char* who, const std::string& path) {
  auto* p = static_cast<unsigned char*>(out);
  int64_t total = 0;
  while (total < n) {
    unsigned want = static_cast<unsigned>(std::min<int64_t>(n - total, kChunk));
    int got = gzread(f, p + total, want);
    if (got < 0) {
      int err = 0;
      const char* msg = gzerror(f, &err);
      EMBER_THROW(IO, "[", who, "] ", path, ": corrupt gzip data (", msg, ")");
    }
    if (got == 0) break;
    total += got;
  }
  return total;
}

// Why the data ended early, for the "truncated" message: a gzip stream cut short says so.
std::string end_reason(gzFile f) {
  int err = Z_OK;
  gzerror(f, &err);
  return err == Z_BUF_ERROR ? " (the gzip stream ends early)" : "";
}

uint32_t big_endian(const unsigned char* b) {
  return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | uint32_t{b[3]};
}

std::string locate(const std::string& path, const char* who) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  if (fs::is_regular_file(path + ".gz", ec)) return path + ".gz";
  EMBER_THROW(IO, "[", who, "] missing file: neither ", path, " nor ", path,
              ".gz exists (expected MNIST-format IDX files; Fashion-MNIST is in the Debian "
              "package dataset-fashion-mnist)");
}

}  // namespace

IdxFile read_idx_ubyte(const std::string& requested, int dims, const char* who) {
  std::string path = locate(requested, who);
  errno = 0;
  GzHandle f(gzopen(path.c_str(), "rb"));
  if (!f)
    EMBER_THROW(IO, "[", who, "] cannot open ", path, ": ",
                errno ? std::strerror(errno) : "out of memory");
  gzbuffer(f.get(), 1u << 20);

  const uint32_t expected_magic = 0x0800u + static_cast<uint32_t>(dims);
  const int64_t header_bytes = 4 * (1 + int64_t{dims});
  std::vector<unsigned char> header(static_cast<size_t>(header_bytes));
  int64_t got = read_bytes(f.get(), header.data(), header_bytes, who, path);
  if (got >= 4) {
    uint32_t magic = big_endian(header.data());
    EMBER_CHECK_KIND(IO, magic == expected_magic, "[", who, "] ", path, ": bad magic number ",
                     magic, " (expected ", expected_magic, ", an IDX file of ", dims,
                     "-D unsigned bytes)");
  }
  EMBER_CHECK_KIND(IO, got == header_bytes, "[", who, "] ", path, ": truncated: ", got,
                   " bytes, too short for the ", header_bytes, "-byte IDX header",
                   end_reason(f.get()));

  Shape shape;
  int64_t count = 1;
  for (int d = 0; d < dims; ++d) {
    int64_t n = big_endian(header.data() + 4 * (d + 1));
    shape.push_back(n);
    EMBER_CHECK_KIND(IO, n == 0 || count <= kMaxIdxBytes / n, "[", who, "] ", path,
                     ": the header declares an implausible shape ", shape_str(shape), "...");
    count *= n;
  }

  // Allocate no more than the file can hold: the bytes after the header for a plain file, the
  // largest expansion of deflate (about 1032:1) for a gzip one.
  std::error_code ec;
  auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (!ec && gzdirect(f.get())) {
    int64_t follow = file_bytes - header_bytes;
    EMBER_CHECK_KIND(IO, count <= follow, "[", who, "] ", path,
                     ": truncated: the header declares shape ", shape_str(shape), " (", count,
                     " bytes of data) but only ", follow, " bytes follow");
  } else if (!ec) {
    EMBER_CHECK_KIND(IO, count / kMaxDeflateRatio <= file_bytes, "[", who, "] ", path,
                     ": the header declares shape ", shape_str(shape), " (", count,
                     " bytes of data), more than this ", file_bytes,
                     "-byte gzip file can hold (truncated or corrupt)");
  }

  Tensor data = empty(shape, {.dtype = kUInt8});
  int64_t read = read_bytes(f.get(), data.data_ptr<uint8_t>(), count, who, path);
  EMBER_CHECK_KIND(IO, read == count, "[", who, "] ", path,
                   ": truncated: the header declares shape ", shape_str(shape), " (", count,
                   " bytes of data) but only ", read, " bytes follow", end_reason(f.get()));
  unsigned char extra[4096];
  int64_t trailing = 0;
  for (int64_t n; (n = read_bytes(f.get(), extra, sizeof extra, who, path)) > 0;) trailing += n;
  EMBER_CHECK_KIND(IO, trailing == 0, "[", who, "] ", path, ": ", trailing,
                   " bytes of extra data after the ", count, " bytes its header declares (shape ",
                   shape_str(shape), ")");
  return {path, data};
}

}  // namespace ember::data::detail
