// io/zip_write.cpp: ZipWriter (io/zip_write.h) -- libzip writing into a memory source.
#include "io/zip_write.h"

#include "ember/error.h"

namespace ember::io::detail {

ZipWriter::ZipWriter(std::string op, std::string path)
    : op_(std::move(op)), path_(std::move(path)) {
  zip_error_t error;
  zip_error_init(&error);
  out_ = zip_source_buffer_create(nullptr, 0, 0, &error);
  za_ = out_ ? zip_open_from_source(out_, ZIP_TRUNCATE, &error) : nullptr;
  if (!za_) {
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    if (out_) zip_source_free(out_);
    fail(why);
  }
  zip_source_keep(out_);  // the archive holds one reference, this writer another
}

ZipWriter::ZipWriter(std::string op, std::string path, const std::string& file)
    : op_(std::move(op)), path_(std::move(path)) {
  int code = 0;
  za_ = zip_open(file.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (!za_) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail(why);
  }
}

ZipWriter::~ZipWriter() {
  if (za_) zip_discard(za_);
  if (out_) zip_source_free(out_);
}

void ZipWriter::close() {
  if (zip_close(za_) != 0) fail(zip_strerror(za_));
  za_ = nullptr;
}

void ZipWriter::fail(const std::string& what) const {
  EMBER_THROW(IO, "[", op_, "] cannot write '", path_, "': ", what);
}

zip_uint64_t ZipWriter::add(const std::string& name, const void* data, size_t size,
                            zip_int32_t method) {
  zip_source_t* member = zip_source_buffer(za_, data, size, 0);
  if (!member) fail(zip_strerror(za_));
  const zip_int64_t index = zip_file_add(za_, name.c_str(), member, ZIP_FL_ENC_UTF_8);
  if (index < 0) {
    zip_source_free(member);
    fail(zip_strerror(za_));
  }
  const auto i = static_cast<zip_uint64_t>(index);
  check(zip_set_file_compression(za_, i, method, 0));
  return i;
}

std::string ZipWriter::finish() {
  if (zip_close(za_) != 0) fail(zip_strerror(za_));
  za_ = nullptr;  // closed and freed by zip_close
  if (zip_source_open(out_) != 0) fail(zip_error_strerror(zip_source_error(out_)));
  std::string bytes;
  char chunk[1 << 16];
  zip_int64_t n;
  while ((n = zip_source_read(out_, chunk, sizeof chunk)) > 0)
    bytes.append(chunk, static_cast<size_t>(n));
  zip_source_close(out_);
  if (n < 0) fail(zip_error_strerror(zip_source_error(out_)));
  return bytes;
}

}  // namespace ember::io::detail
