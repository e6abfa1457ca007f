// io/npz_write.cpp: writing .npz archives -- libzip builds the archive in memory, then it is
// written atomically like every other ember file.
#include <deque>
#include <set>

#include "ember/io/atomic_file.h"
#include "ember/io/npz.h"
#include "io/npy_format.h"
#include "io/zip_write.h"

namespace ember::io {

void save_npz(const std::string& path, const NamedTensors& tensors, bool compressed) {
  std::set<std::string> names;
  std::deque<std::string> payloads;  // must outlive finish(): libzip reads them then
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
  detail::ZipWriter zip("save_npz", path);
  size_t i = 0;
  for (const auto& [name, t] : tensors) {
    const std::string& bytes = payloads[i++];
    zip.add(name + ".npy", bytes.data(), bytes.size(), compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE);
  }
  write_file_atomic(path, zip.finish());
}

}  // namespace ember::io
