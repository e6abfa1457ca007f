// io/npy.cpp: save_npy and load_npy -- the .npy codec applied to a file.
#include "ember/io/npy.h"

#include "ember/io/atomic_file.h"
#include "io/file_bytes.h"
#include "io/npy_format.h"

namespace ember::io {

void save_npy(const std::string& path, const Tensor& tensor) {
  write_file_atomic(path, detail::encode_npy(tensor));
}

Tensor load_npy(const std::string& path, Device device) {
  detail::FileBytes bytes(path, "load_npy");
  return detail::decode_npy(bytes.data(), bytes.size(), "load_npy", path, device);
}

}  // namespace ember::io
