// tools/ember/output.h: standard output that is checked -- results written to a full disk, a
// closed pipe or /dev/full are an error, not a silent partial file.
#pragma once

namespace ember::cli {

// Flushes stdout; throws ember::Error (naming the cause, e.g. "No space left on device") when
// this or any earlier write to it failed.
void flush_stdout_checked();

}  // namespace ember::cli
