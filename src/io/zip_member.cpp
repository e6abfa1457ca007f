// io/zip_member.cpp: opening zip archives from memory and reading their members (zip_member.h).
#include "io/zip_member.h"

#include <filesystem>

namespace ember::io::detail {

namespace {

// Deflate expands at most about 1032:1; a member claiming more is corrupt (or a zip bomb).
constexpr uint64_t kMaxDeflateRatio = 1032;

struct FileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

}  // namespace

ZipArchive open_zip(const unsigned char* data, size_t size, const ZipFail& fail) {
  if (size == 0) fail("the file is empty");
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(data, size, 0, &error);
  ZipArchive za(source ? zip_open_from_source(source, ZIP_RDONLY, &error) : nullptr);
  if (!za) {
    zip_source_free(source);  // not taken by a failed open; null is allowed
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail("not a zip archive or a damaged one (" + why + ")");
  }
  return za;
}

ZipArchive open_zip_file(const std::string& path, size_t* size, const ZipFail& fail) {
  int code = 0;
  ZipArchive za(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!za) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail("not a zip archive or a damaged one (" + why + ")");
  }
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) fail("cannot tell the archive's size (" + ec.message() + ")");
  *size = static_cast<size_t>(bytes);
  return za;
}

zip_stat_t zip_member_stat(zip_t* za, zip_uint64_t index, size_t archive_size,
                           const ZipFail& fail) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(za, index, 0, &st) != 0)
    fail("cannot read member " + std::to_string(index) + ": " + zip_strerror(za));
  const zip_uint64_t need = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
                            ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
  if ((st.valid & need) != need) fail("member " + std::to_string(index) + " lacks its sizes");
  const std::string name = st.name;
  if (st.encryption_method != ZIP_EM_NONE) fail("member '" + name + "' is encrypted");
  if (st.comp_method == ZIP_CM_STORE) {
    if (st.size != st.comp_size)
      fail("stored member '" + name + "' has different compressed and plain sizes");
  } else if (st.comp_method == ZIP_CM_DEFLATE) {
    if (st.size / kMaxDeflateRatio > st.comp_size)
      fail("member '" + name + "' claims " + std::to_string(st.size) + " bytes from " +
           std::to_string(st.comp_size) + " compressed ones");
  } else {
    fail("member '" + name + "' uses compression method " + std::to_string(st.comp_method) +
         " (only stored and deflated members are read)");
  }
  if (st.comp_size > archive_size)
    fail("member '" + name + "' is larger than the archive (truncated?)");
  return st;
}

void read_zip_member(zip_t* za, zip_uint64_t index, const zip_stat_t& st, void* dst,
                     const ZipFail& fail) {
  const std::string name = st.name;
  std::unique_ptr<zip_file_t, FileCloser> f(zip_fopen_index(za, index, 0));
  if (!f) fail("cannot open member '" + name + "': " + zip_strerror(za));
  auto* out = static_cast<char*>(dst);
  zip_uint64_t done = 0;
  while (done < st.size) {
    zip_int64_t n = zip_fread(f.get(), out + done, st.size - done);
    if (n < 0) fail("member '" + name + "' is corrupt: " + zip_file_strerror(f.get()));
    if (n == 0) break;
    done += static_cast<zip_uint64_t>(n);
  }
  if (done != st.size)
    fail("member '" + name + "' ends after " + std::to_string(done) + " of its " +
         std::to_string(st.size) + " bytes");
  char extra;
  zip_int64_t n = zip_fread(f.get(), &extra, 1);
  if (n < 0) fail("member '" + name + "' is corrupt: " + zip_file_strerror(f.get()));
  if (n > 0) fail("member '" + name + "' is longer than its directory entry says");
}

}  // namespace ember::io::detail
