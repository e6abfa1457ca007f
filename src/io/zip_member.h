// io/zip_member.h: what the readers of zip-based formats (.npz, torch.save's archives) share on
// top of libzip -- an archive opened from memory, a member's sizes checked against the archive
// before anything is allocated for it, and its bytes read with the CRC checked.
#pragma once

#include <zip.h>

#include <functional>
#include <memory>
#include <string>

namespace ember::io::detail {

// Throws the reader's own IO error for a message; never returns.
using ZipFail = std::function<void(const std::string& message)>;

struct ZipArchiveCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipArchiveCloser>;

// Opens the archive in data[0, size) (not copied: it must outlive the archive).
ZipArchive open_zip(const unsigned char* data, size_t size, const ZipFail& fail);
// Opens the archive file at `path`, reading members from it as they are wanted (no mapping, so a
// big archive's bytes do not count in the process's memory); `size` receives the file's size.
ZipArchive open_zip_file(const std::string& path, size_t* size, const ZipFail& fail);

// Member `index`'s directory entry, with its name, sizes and method checked: stored (equal
// sizes) or deflated (at most ~1032:1), not encrypted, not larger than the archive.
zip_stat_t zip_member_stat(zip_t* za, zip_uint64_t index, size_t archive_size, const ZipFail& fail);

// Reads the member's st.size bytes into dst, then on to its end, which makes libzip check the CRC.
void read_zip_member(zip_t* za, zip_uint64_t index, const zip_stat_t& st, void* dst,
                     const ZipFail& fail);

}  // namespace ember::io::detail
