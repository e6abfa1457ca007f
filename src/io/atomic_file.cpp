// io/atomic_file.cpp: writing a file so that readers see either the old or the complete new one.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "ember/error.h"
#include "ember/fault_point.h"
#include "ember/io/atomic_file.h"

namespace ember::io {

namespace {
[[noreturn]] void fail(const std::string& what, const std::string& path) {
  EMBER_THROW(IO, "[write] ", what, " '", path, "': ", std::strerror(errno));
}
// True when text is a process id of no running process (of this machine).
bool is_dead_pid(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const auto pid = static_cast<pid_t>(std::stol(text));
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0 && is_dead_pid(name.substr(prefix.size())))
      fs::remove(it->path(), ec);  // best effort: a file another cleaner took is fine
  }
}

void write_file_atomic(const std::string& path,
                       const std::function<void(const std::string& temporary)>& write) {
  remove_stale_temporaries(path);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    write(tmp);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot reopen", tmp);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    fail("cannot flush", tmp);
  }
  fault_point("atomic-write-before-rename");
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot rename into", path);
  }
  // Make the rename itself durable.
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  int dfd = ::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  write_file_atomic(path, [&](const std::string& tmp) {
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail("cannot create", tmp);
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int saved = errno;
        ::close(fd);
        errno = saved;
        fail("cannot write", tmp);
      }
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) fail("cannot write", tmp);
  });
}

}  // namespace ember::io
