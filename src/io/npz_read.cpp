// io/npz_read.cpp: reading .npz archives through libzip, from memory, bounding every member's
// size by what the archive can hold before allocating for it.
#include <zip.h>

#include <memory>
#include <set>
#include <vector>

#include "ember/io/npz.h"
#include "io/file_bytes.h"
#include "io/npy_format.h"
#include "io/npz_format.h"

namespace ember::io {

namespace detail {

namespace {

// Deflate expands at most about 1032:1; a member claiming more is corrupt (or a zip bomb).
constexpr uint64_t kMaxDeflateRatio = 1032;

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  EMBER_THROW(IO, "[load_npz] '", path, "' is not a valid .npz file: ", what);
}

struct ArchiveCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct FileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

std::string member_bytes(zip_t* za, zip_uint64_t index, const zip_stat_t& st,
                         const std::string& path, const std::string& name) {
  std::unique_ptr<zip_file_t, FileCloser> f(zip_fopen_index(za, index, 0));
  if (!f) bad(path, "cannot open member '" + name + "': " + zip_strerror(za));
  std::string out(st.size, '\0');
  zip_uint64_t done = 0;
  while (done < st.size) {
    zip_int64_t n = zip_fread(f.get(), out.data() + done, st.size - done);
    if (n < 0) bad(path, "member '" + name + "' is corrupt: " + zip_file_strerror(f.get()));
    if (n == 0) break;
    done += static_cast<zip_uint64_t>(n);
  }
  if (done != st.size)
    bad(path, "member '" + name + "' ends after " + std::to_string(done) + " of its " +
                  std::to_string(st.size) + " bytes");
  // Reading on to the end is what makes libzip check the CRC.
  char extra;
  zip_int64_t n = zip_fread(f.get(), &extra, 1);
  if (n < 0) bad(path, "member '" + name + "' is corrupt: " + zip_file_strerror(f.get()));
  if (n > 0) bad(path, "member '" + name + "' is longer than its directory entry says");
  return out;
}

}  // namespace

NamedTensors decode_npz(const unsigned char* data, size_t size, const std::string& path,
                        Device device) {
  if (size == 0) bad(path, "the file is empty");
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(data, size, 0, &error);
  std::unique_ptr<zip_t, ArchiveCloser> za(source ? zip_open_from_source(source, ZIP_RDONLY, &error)
                                                  : nullptr);
  if (!za) {
    zip_source_free(source);  // not taken by a failed open; null is allowed
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    bad(path, "not a zip archive or a damaged one (" + why + ")");
  }
  NamedTensors result;
  std::set<std::string> keys;
  zip_int64_t count = zip_get_num_entries(za.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za.get(), index, 0, &st) != 0)
      bad(path, "cannot read member " + std::to_string(i) + ": " + zip_strerror(za.get()));
    const zip_uint64_t need = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
                              ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
    if ((st.valid & need) != need) bad(path, "member " + std::to_string(i) + " lacks its sizes");
    std::string name = st.name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0)
      bad(path, "member '" + name + "' is not a .npy array (numpy.savez names them <key>.npy)");
    if (st.encryption_method != ZIP_EM_NONE) bad(path, "member '" + name + "' is encrypted");
    if (st.comp_method == ZIP_CM_STORE) {
      if (st.size != st.comp_size)
        bad(path, "stored member '" + name + "' has different compressed and plain sizes");
    } else if (st.comp_method == ZIP_CM_DEFLATE) {
      if (st.size / kMaxDeflateRatio > st.comp_size)
        bad(path, "member '" + name + "' claims " + std::to_string(st.size) + " bytes from " +
                      std::to_string(st.comp_size) + " compressed ones");
    } else {
      bad(path, "member '" + name + "' uses compression method " + std::to_string(st.comp_method) +
                    "; numpy writes stored or deflated members");
    }
    if (st.comp_size > size)
      bad(path, "member '" + name + "' is larger than the archive (truncated?)");
    std::string key = name.substr(0, name.size() - 4);
    if (!keys.insert(key).second) bad(path, "the key '" + key + "' appears twice");
    std::string bytes = member_bytes(za.get(), index, st, path, name);
    result.emplace_back(key, decode_npy(reinterpret_cast<const unsigned char*>(bytes.data()),
                                        bytes.size(), "load_npz", path + ":" + name, device));
  }
  return result;
}

}  // namespace detail

NamedTensors load_npz(const std::string& path, Device device) {
  detail::FileBytes bytes(path, "load_npz");
  return detail::decode_npz(bytes.data(), bytes.size(), path, device);
}

}  // namespace ember::io
