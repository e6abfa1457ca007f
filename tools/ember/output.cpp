// tools/ember/output.cpp: flush_stdout_checked of output.h.
#include "output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ember/error.h"

namespace ember::cli {

void flush_stdout_checked() {
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return;
  const int saved = errno;
  std::clearerr(stdout);
  EMBER_THROW(IO, "writing to standard output failed",
              saved ? std::string(": ") + std::strerror(saved) : std::string(),
              "; the output is incomplete (free disk space or write somewhere else)");
}

}  // namespace ember::cli
