// io/pt_zip_read.cpp: torch.save's zip container -- <folder>/data.pkl, the pickled object, and
// <folder>/data/<key>, each storage's raw little-endian bytes -- read through libzip from memory.
#include <cstring>

#include "ember/error.h"
#include "io/pt_format.h"
#include "io/zip_member.h"

namespace ember::io::detail {

namespace {

PtValue read_archive(const ZipArchive& za, size_t size, const std::string& path, Device device,
                     const ZipFail& fail) {
  // The one member <folder>/data.pkl names the folder everything else is in.
  std::string folder;
  zip_int64_t pickle_index = -1;
  const zip_int64_t count = zip_get_num_entries(za.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(za.get(), static_cast<zip_uint64_t>(i), 0);
    if (!name) fail("member " + std::to_string(i) + " has no name");
    const std::string_view n(name);
    const auto slash = n.find('/');
    if (slash == std::string_view::npos || n.substr(slash) != "/data.pkl") continue;
    if (pickle_index >= 0) fail("two data.pkl members ('" + folder + "/data.pkl', '" + name + "')");
    folder = std::string(n.substr(0, slash));
    pickle_index = i;
  }
  if (pickle_index < 0)
    fail("no <folder>/data.pkl member (a zip file, but not one torch.save wrote)");

  const auto member = [&](const std::string& name, std::string* out) {
    const zip_int64_t index = zip_name_locate(za.get(), name.c_str(), 0);
    if (index < 0) return false;
    const zip_stat_t st = zip_member_stat(za.get(), static_cast<zip_uint64_t>(index), size, fail);
    out->assign(st.size, '\0');
    read_zip_member(za.get(), static_cast<zip_uint64_t>(index), st, out->data(), fail);
    return true;
  };
  std::string text;
  if (member(folder + "/byteorder", &text) && text != "little")
    fail("its byteorder record says '" + text.substr(0, 16) +
         "'; only little-endian checkpoints are read");
  std::string pickle;
  member(folder + "/data.pkl", &pickle);
  PickleRef root = read_pickle(pickle, "'" + path + "' (" + folder + "/data.pkl)");

  PtStorageReader read = [&](const std::string& key) {
    const std::string name = folder + "/data/" + key;
    const zip_int64_t index = zip_name_locate(za.get(), name.c_str(), 0);
    if (index < 0)
      fail("the pickle names storage '" + key + "' but there is no member '" + name + "'");
    const zip_stat_t st = zip_member_stat(za.get(), static_cast<zip_uint64_t>(index), size, fail);
    // Read straight into the storage: nothing else of the size of a tensor is allocated.
    auto storage = std::make_shared<Storage>(static_cast<size_t>(st.size), Device(kCPU));
    read_zip_member(za.get(), static_cast<zip_uint64_t>(index), st, storage->data(), fail);
    return storage;
  };
  return pt_value_from_pickle(root, read, "'" + path + "'", device, false);
}

ZipFail failure(const std::string& path) {
  return [path](const std::string& what) {
    EMBER_THROW(IO, "[load_pt] '", path, "' is not a valid PyTorch checkpoint: ", what);
  };
}

}  // namespace

PtValue load_pt_zip(const unsigned char* data, size_t size, const std::string& path,
                    Device device) {
  const ZipFail fail = failure(path);
  return read_archive(open_zip(data, size, fail), size, path, device, fail);
}

PtValue load_pt_zip_file(const std::string& path, Device device) {
  const ZipFail fail = failure(path);
  size_t size = 0;
  ZipArchive za = open_zip_file(path, &size, fail);
  return read_archive(za, size, path, device, fail);
}

}  // namespace ember::io::detail
