// ember/io/safetensors.h: reading and writing the safetensors format (an 8-byte header length, a
// JSON header naming each tensor's dtype, shape and byte range, then the raw data), the format
// Python's safetensors package and PyTorch use. Files are written atomically.
#pragma once

#include <map>
#include <string>

#include "ember/io/atomic_file.h"
#include "ember/io/named_tensors.h"
#include "ember/tensor.h"

namespace ember::io {

using Metadata = std::map<std::string, std::string>;

// Writes tensors (from any device; copied back to the host) and string metadata to `path`
// through a temporary file that is synced and renamed, so a crash never leaves a broken file.
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const Metadata& metadata = {});

struct SafetensorsFile {
  NamedTensors tensors;  // in the order of their data in the file
  Metadata metadata;
};

// Reads a file, validating the header (length, JSON, dtypes, shapes against byte ranges, ranges
// that overlap, leave gaps or run past the end, duplicate names, non-string metadata); errors
// name the file and the problem. Tensors are placed on `device`. Files of 16 MiB or more are
// memory-mapped (read-only) rather than read into a buffer.
SafetensorsFile load_safetensors(const std::string& path, Device device = Device(kCPU));

}  // namespace ember::io
