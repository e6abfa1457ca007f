// io/zip_write.h: a zip archive built with libzip, for the writers of .npz and PyTorch checkpoint
// files: in memory (its bytes then go to write_file_atomic) or straight into a file (the
// temporary of write_file_atomic's writer form), reading each member from its caller's memory.
#pragma once

#include <zip.h>

#include <memory>
#include <string>

namespace ember::io::detail {

class ZipWriter {
 public:
  // `op` and `path` name errors: "[op] cannot write 'path': what". The archive is built in memory
  // (finish() returns it) or, with `file`, written to that file by close().
  ZipWriter(std::string op, std::string path);
  ZipWriter(std::string op, std::string path, const std::string& file);
  ZipWriter(const ZipWriter&) = delete;
  ZipWriter& operator=(const ZipWriter&) = delete;
  ~ZipWriter();

  // Adds a member of `size` bytes at `data`, which must stay valid until finish(), compressed
  // with `method` (ZIP_CM_STORE, ZIP_CM_DEFLATE); returns its index.
  zip_uint64_t add(const std::string& name, const void* data, size_t size, zip_int32_t method);
  // The archive, for libzip's other per-member settings; pass their results to check.
  zip_t* archive() const { return za_; }
  void check(int libzip_result) const {
    if (libzip_result != 0) fail(zip_strerror(za_));
  }
  // Writes the central directory and returns the whole archive (built in memory).
  std::string finish();
  // Writes the members and the central directory to the file (built to a file).
  void close();

  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string op_, path_;
  zip_source_t* out_ = nullptr;  // the memory the archive is written to (null: a file)
  zip_t* za_ = nullptr;          // open until finish()
};

}  // namespace ember::io::detail
