// tools/ember/omp_policy.cpp: re-runs the ember program with a short OpenMP spin when the user did
// not choose one (see omp_policy.h).
#include "omp_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace ember::cli {

void apply_omp_spin_policy(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY")) return;
  if (setenv("GOMP_SPINCOUNT", "10000", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed (no /proc, say): carry on with the default policy; the variable set above only
  // affects child processes.
}

}  // namespace ember::cli
