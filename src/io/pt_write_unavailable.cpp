// io/pt_write_unavailable.cpp: save_pt in builds without libzip (EMBER_MINIMAL_DEPS): it throws
// an error saying how to get it.
#include "ember/error.h"
#include "ember/io/pt.h"

namespace ember::io {

void save_pt(const std::string& path, const PtValue&) {
  EMBER_THROW(IO, "[save_pt] ", path,
              ": this ember was built without libzip (EMBER_MINIMAL_DEPS), so PyTorch checkpoint "
              "files cannot be written; rebuild with libzip (Debian: libzip-dev), or use "
              "save_safetensors");
}

}  // namespace ember::io
