// base/fault_point.cpp: fault_point of ember/fault_point.h.
#include "ember/fault_point.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>

namespace ember {

namespace {
struct FaultAt {
  std::string name;
  long count = 1;  // the count-th time the point is reached
};
FaultAt parse(const char* text) {
  FaultAt f{text ? text : ""};
  const size_t colon = f.name.rfind(':');
  if (colon != std::string::npos) {
    f.count = std::strtol(f.name.c_str() + colon + 1, nullptr, 10);
    f.name.resize(colon);
  }
  return f;
}
}  // namespace

void fault_point(std::string_view name) {
  static const FaultAt at = parse(std::getenv("EMBER_FAULT_AT"));
  static std::atomic<long> reached{0};
  if (!at.name.empty() && name == at.name && ++reached == at.count) std::raise(SIGKILL);
}

}  // namespace ember
