// tools/ember/cli_checks.h: validators of numeric flags with short, plain messages ("--lr: 'abc'
// is not a number", "--lr: 0 is not positive") instead of CLI11's ranges, which print their
// bounds in full (DBL_MAX in 309 digits) and call a word "out of range".
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>

namespace ember::cli {

// A number (integer or real) greater than 0.
CLI::Validator positive_number();
// A number (integer or real) at least 0.
CLI::Validator non_negative_number();
// A real number from lo to hi, both included.
CLI::Validator number_in(double lo, double hi);
// An integer from lo to hi, both included.
CLI::Validator integer_in(int64_t lo, int64_t hi);
// An unsigned 64-bit integer (a seed): no sign, no fraction, at most 2^64 - 1.
CLI::Validator unsigned_integer();

}  // namespace ember::cli
