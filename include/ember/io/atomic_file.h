// ember/io/atomic_file.h: writing a whole file so that readers see the old file or the complete
// new one, never a torn one.
#pragma once

#include <string>

namespace ember::io {

// Writes `bytes` to `path` atomically: a temporary file in the same directory, fsync, rename.
void write_file_atomic(const std::string& path, const std::string& bytes);

}  // namespace ember::io
