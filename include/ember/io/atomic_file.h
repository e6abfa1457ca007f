// ember/io/atomic_file.h: writing a whole file so that readers see the old file or the complete
// new one, never a torn one.
#pragma once

#include <functional>
#include <string>

namespace ember::io {

// Writes `bytes` to `path` atomically: a temporary file in the same directory
// (`path`.tmp.<pid>), fsync, rename. Temporaries of `path` that a killed writer left behind
// are removed first (remove_stale_temporaries).
void write_file_atomic(const std::string& path, const std::string& bytes);

// The same for a writer that makes the file itself (a big archive is then never held in memory
// whole): `write(temporary)` writes the complete new file at that path, which is then synced and
// renamed onto `path`; if `write` throws, the temporary is removed and `path` is untouched.
void write_file_atomic(const std::string& path,
                       const std::function<void(const std::string& temporary)>& write);

// Removes `path`.tmp.<pid> files whose process no longer runs on this machine.
void remove_stale_temporaries(const std::string& path);

}  // namespace ember::io
