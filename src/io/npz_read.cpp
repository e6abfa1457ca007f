// io/npz_read.cpp: reading .npz archives through libzip, from memory, bounding every member's
// size by what the archive can hold before allocating for it (io/zip_member.h).
#include <set>

#include "ember/io/npz.h"
#include "io/file_bytes.h"
#include "io/npy_format.h"
#include "io/npz_format.h"
#include "io/zip_member.h"

namespace ember::io {

namespace detail {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  EMBER_THROW(IO, "[load_npz] '", path, "' is not a valid .npz file: ", what);
}

}  // namespace

NamedTensors decode_npz(const unsigned char* data, size_t size, const std::string& path,
                        Device device) {
  const ZipFail fail = [&](const std::string& what) { bad(path, what); };
  ZipArchive za = open_zip(data, size, fail);
  NamedTensors result;
  std::set<std::string> keys;
  zip_int64_t count = zip_get_num_entries(za.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    auto index = static_cast<zip_uint64_t>(i);
    const zip_stat_t st = zip_member_stat(za.get(), index, size, fail);
    std::string name = st.name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0)
      bad(path, "member '" + name + "' is not a .npy array (numpy.savez names them <key>.npy)");
    std::string key = name.substr(0, name.size() - 4);
    if (!keys.insert(key).second) bad(path, "the key '" + key + "' appears twice");
    std::string bytes(st.size, '\0');
    read_zip_member(za.get(), index, st, bytes.data(), fail);
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
