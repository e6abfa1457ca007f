// tools/ember/cli_checks.cpp: the numeric flag validators of cli_checks.h.
#include "cli_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace ember::cli {

namespace {

// The whole input as a finite double, or an error message.
std::string parse_number(const std::string& input, double& value) {
  const char* begin = input.c_str();
  char* end = nullptr;
  errno = 0;
  value = std::strtod(begin, &end);
  if (input.empty() || end == begin || *end != '\0') return "'" + input + "' is not a number";
  if (errno == ERANGE || !std::isfinite(value)) return "'" + input + "' is out of range";
  return {};
}

std::string shortest(double v) {
  std::string s = std::to_string(v);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

CLI::Validator number_check(double lo, double hi, bool lo_open, const std::string& what) {
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        double v = 0;
        std::string bad = parse_number(input, v);
        if (!bad.empty()) return bad;
        if (v < lo || (lo_open && v == lo) || v > hi) return input + " is not " + what;
        return {};
      },
      "NUMBER");
}

}  // namespace

CLI::Validator positive_number() {
  return number_check(0, HUGE_VAL, true, "positive");
}

CLI::Validator non_negative_number() {
  return number_check(0, HUGE_VAL, false, "zero or more");
}

CLI::Validator number_in(double lo, double hi) {
  return number_check(lo, hi, false, "from " + shortest(lo) + " to " + shortest(hi));
}

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        const char* begin = input.c_str();
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(begin, &end, 10);
        if (input.empty() || end == begin || *end != '\0') {
          double d = 0;
          return parse_number(input, d).empty() ? "'" + input + "' is not a whole number"
                                                : "'" + input + "' is not a number";
        }
        if (errno == ERANGE || v < lo || v > hi)
          return input + " is not from " + std::to_string(lo) + " to " + std::to_string(hi);
        return {};
      },
      "INT");
}

CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        const char* begin = input.c_str();
        char* end = nullptr;
        errno = 0;
        std::strtoull(begin, &end, 10);
        if (input.empty() || input[0] == '-' || input[0] == '+' || end == begin || *end != '\0')
          return "'" + input + "' is not a whole number from 0 to 18446744073709551615";
        if (errno == ERANGE) return input + " is larger than 18446744073709551615";
        return {};
      },
      "UINT");
}

}  // namespace ember::cli
