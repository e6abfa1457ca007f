// data/gz_fallback.h: the few zlib gz* reading calls the IDX reader uses, over stdio, for builds
// without zlib (EMBER_MINIMAL_DEPS): plain files read as zlib reads them; gzopen refuses a gzip
// file with an error saying so.
#pragma once

#include <cstdio>

#include "ember/error.h"

namespace ember::data::detail {

struct gzFile_s {
  std::FILE* file;
};
using gzFile = gzFile_s*;

inline constexpr int Z_OK = 0;
inline constexpr int Z_BUF_ERROR = -5;

inline gzFile gzopen(const char* path, const char* mode) {
  std::FILE* f = std::fopen(path, mode);
  if (!f) return nullptr;
  unsigned char magic[2] = {};
  size_t got = std::fread(magic, 1, 2, f);
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {  // gzip
    std::fclose(f);
    EMBER_THROW(IO, path,
                ": gzip-compressed, but this ember was built without zlib (EMBER_MINIMAL_DEPS); "
                "decompress it with gunzip or rebuild with zlib (Debian: zlib1g-dev)");
  }
  std::rewind(f);
  return new gzFile_s{f};
}
inline int gzclose(gzFile f) {
  int rc = std::fclose(f->file);
  delete f;
  return rc;
}
inline int gzbuffer(gzFile, unsigned) {
  return 0;
}
inline int gzdirect(gzFile) {
  return 1;
}
inline int gzread(gzFile f, void* buf, unsigned len) {
  size_t got = std::fread(buf, 1, len, f->file);
  return std::ferror(f->file) ? -1 : static_cast<int>(got);
}
inline const char* gzerror(gzFile f, int* err) {
  *err = std::ferror(f->file) ? -1 : Z_OK;
  return *err ? "read error" : "";
}

}  // namespace ember::data::detail
