// data/idx_file.h: reading IDX files of unsigned bytes (the MNIST format), gzip-compressed or not.
#pragma once

#include <cstdint>
#include <string>

#include "ember/tensor.h"

namespace ember::data::detail {

struct IdxFile {
  std::string path;  // the file read: `path` as asked, or with ".gz" appended
  Tensor data;       // uint8, shaped by the header's dims
};

// Reads `path`, or `path` + ".gz" when only that exists, as an IDX file of `dims`-D unsigned
// bytes (magic 0x0800 + dims: 2049 for 1-D, 2051 for 3-D). Checks the magic number and that the
// data after the header is exactly what the dims declare. Every problem (missing file, bad magic,
// truncated or over-long data, corrupt gzip) is an Error of kind IO starting with "[who]" and
// naming the file.
IdxFile read_idx_ubyte(const std::string& path, int dims, const char* who);

}  // namespace ember::data::detail
