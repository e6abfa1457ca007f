// io/npz_unavailable.cpp: save_npz and load_npz in builds without libzip (EMBER_MINIMAL_DEPS):
// each throws an error saying how to get them.
#include "ember/error.h"
#include "ember/io/npz.h"
#include "io/npz_format.h"

namespace ember::io {

namespace {

[[noreturn]] void no_libzip(const char* op, const std::string& path) {
  EMBER_THROW(IO, "[", op, "] ", path,
              ": this ember was built without libzip (EMBER_MINIMAL_DEPS), so .npz archives are "
              "unavailable; rebuild with libzip (Debian: libzip-dev), or use save_npy / "
              "save_safetensors");
}

}  // namespace

void save_npz(const std::string& path, const NamedTensors&, bool) {
  no_libzip("save_npz", path);
}

NamedTensors load_npz(const std::string& path, Device) {
  no_libzip("load_npz", path);
}

namespace detail {

NamedTensors decode_npz(const unsigned char*, size_t, const std::string& path, Device) {
  no_libzip("load_npz", path);
}

}  // namespace detail

}  // namespace ember::io
