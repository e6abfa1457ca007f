// io/file_bytes.h: a whole file's bytes for the readers -- read into memory, or mapped read-only
// when it is large, so that a big checkpoint is not held twice.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ember::io::detail {

class FileBytes {
 public:
  static constexpr size_t kMapThreshold = size_t{16} << 20;  // 16 MiB

  // Throws an IO error naming `op` and `path` when the file cannot be opened or read. Files of
  // at least `map_threshold` bytes are memory-mapped (falling back to reading if mmap fails).
  FileBytes(const std::string& path, const char* op, size_t map_threshold = kMapThreshold);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  bool mapped() const { return map_ != nullptr; }
  // Tells the kernel the mapped bytes [p, p + n) were consumed (copied into tensors): their
  // pages leave the process's resident memory, so a big file is never held twice. A read file's
  // buffer is kept; the bytes stay readable either way (a mapping faults them in again).
  void release(const unsigned char* p, size_t n) const;

 private:
  std::vector<unsigned char> buffer_;
  void* map_ = nullptr;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ember::io::detail
