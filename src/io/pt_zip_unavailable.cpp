// io/pt_zip_unavailable.cpp: torch.save's zip container in builds without libzip
// (EMBER_MINIMAL_DEPS): an error saying how to get it; the legacy container still loads.
#include "ember/error.h"
#include "io/pt_format.h"

namespace ember::io::detail {

namespace {

[[noreturn]] void no_libzip(const std::string& path) {
  EMBER_THROW(IO, "[load_pt] ", path,
              ": this ember was built without libzip (EMBER_MINIMAL_DEPS), so torch.save's zip "
              "files are unavailable; rebuild with libzip (Debian: libzip-dev)");
}

}  // namespace

PtValue load_pt_zip(const unsigned char*, size_t, const std::string& path, Device) {
  no_libzip(path);
}

PtValue load_pt_zip_file(const std::string& path, Device) {
  no_libzip(path);
}

}  // namespace ember::io::detail
