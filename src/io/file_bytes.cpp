// io/file_bytes.cpp: reading or memory-mapping a whole file for the readers.
#include "io/file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ember/error.h"

namespace ember::io::detail {

namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

FileBytes::FileBytes(const std::string& path, const char* op, size_t map_threshold) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) EMBER_THROW(IO, "[", op, "] cannot open '", path, "': ", std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    EMBER_THROW(IO, "[", op, "] cannot stat '", path, "': ", std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    EMBER_THROW(IO, "[", op, "] '", path, "' is not a regular file; pass the path of a file");
  size_ = static_cast<size_t>(st.st_size);
  static const unsigned char kEmpty = 0;
  data_ = &kEmpty;
  if (size_ == 0) return;
  if (size_ >= map_threshold) {
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, f.fd, 0);
    if (m != MAP_FAILED) {
      map_ = m;
      data_ = static_cast<const unsigned char*>(m);
      return;
    }
  }
  buffer_.resize(size_);
  size_t done = 0;
  while (done < size_) {
    ssize_t n = ::read(f.fd, buffer_.data() + done, size_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) EMBER_THROW(IO, "[", op, "] cannot read '", path, "': ", std::strerror(errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  size_ = done;  // the file shrank while we read it: the readers see what is there
  data_ = buffer_.data();
}

void FileBytes::release(const unsigned char* p, size_t n) const {
  if (!map_ || n == 0) return;
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  // whole pages inside the range only: its neighbours may still be wanted
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

FileBytes::~FileBytes() {
  if (map_) ::munmap(map_, size_);
}

}  // namespace ember::io::detail
