// io/npz_write.cpp: writing .npz archives -- libzip builds the archive in memory, then it is
// written atomically like every other ember file.
#include <zip.h>

#include <deque>
#include <memory>
#include <set>

#include "ember/io/atomic_file.h"
#include "ember/io/npz.h"
#include "io/npy_format.h"

namespace ember::io {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  EMBER_THROW(IO, "[save_npz] cannot write '", path, "': ", what);
}

struct SourceFree {
  void operator()(zip_source_t* s) const { zip_source_free(s); }
};
struct ArchiveDiscard {
  void operator()(zip_t* z) const { zip_discard(z); }
};

// The bytes of a zip source (an archive libzip has finished writing into memory).
std::string source_bytes(zip_source_t* source, const std::string& path) {
  if (zip_source_open(source) != 0) fail(path, zip_error_strerror(zip_source_error(source)));
  std::string out;
  char chunk[1 << 16];
  zip_int64_t n;
  while ((n = zip_source_read(source, chunk, sizeof chunk)) > 0)
    out.append(chunk, static_cast<size_t>(n));
  zip_source_close(source);
  if (n < 0) fail(path, zip_error_strerror(zip_source_error(source)));
  return out;
}

}  // namespace

void save_npz(const std::string& path, const NamedTensors& tensors, bool compressed) {
  std::set<std::string> names;
  std::deque<std::string> payloads;  // must outlive zip_close: libzip reads them then
  for (const auto& [name, t] : tensors) {
    EMBER_CHECK(!name.empty(), "[save_npz] a tensor has an empty name; give every tensor a name");
    EMBER_CHECK(names.insert(name).second, "[save_npz] duplicate tensor name '", name, "'");
    payloads.push_back(detail::encode_npy(t));
  }
  if (tensors.empty()) {
    // libzip writes nothing for an empty archive; numpy writes the bare end-of-directory record.
    write_file_atomic(path, std::string("PK\x05\x06", 4) + std::string(18, '\0'));
    return;
  }
  zip_error_t error;
  zip_error_init(&error);
  std::unique_ptr<zip_source_t, SourceFree> out(zip_source_buffer_create(nullptr, 0, 0, &error));
  std::unique_ptr<zip_t, ArchiveDiscard> za(
      out ? zip_open_from_source(out.get(), ZIP_TRUNCATE, &error) : nullptr);
  if (!za) {
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail(path, why);
  }
  zip_source_keep(out.get());  // the archive holds one reference, `out` another
  size_t i = 0;
  for (const auto& [name, t] : tensors) {
    const std::string& bytes = payloads[i++];
    zip_source_t* member = zip_source_buffer(za.get(), bytes.data(), bytes.size(), 0);
    if (!member) fail(path, zip_strerror(za.get()));
    zip_int64_t index = zip_file_add(za.get(), (name + ".npy").c_str(), member, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(member);
      fail(path, zip_strerror(za.get()));
    }
    if (zip_set_file_compression(za.get(), static_cast<zip_uint64_t>(index),
                                 compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0)
      fail(path, zip_strerror(za.get()));
  }
  if (zip_close(za.get()) != 0) fail(path, zip_strerror(za.get()));
  za.release();  // closed and freed by zip_close
  write_file_atomic(path, source_bytes(out.get(), path));
}

}  // namespace ember::io
