// ember/fault_point.h: a test hook that kills the process at a named point between writes, so
// that tests can check what a crash at that moment leaves behind. EMBER_FAULT_AT=<name> makes
// the first fault_point(<name>) raise SIGKILL, EMBER_FAULT_AT=<name>:<n> the n-th; without it
// (always, outside tests) it does nothing.
#pragma once

#include <string_view>

namespace ember {

// Points: "atomic-write-before-rename" (io/atomic_file: the temporary file written, not yet
// renamed), "train-after-metrics" (ember train: metrics.csv written, the checkpoint not yet).
void fault_point(std::string_view name);

}  // namespace ember
