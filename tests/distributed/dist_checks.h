// tests/distributed/dist_checks.h: what the scenarios of ember_dist_worker share -- the failure
// counter and check().
#pragma once

#include <string>

#include "ember/device.h"

namespace ember::dist_test {

extern int failures;
// Counts and prints a failure (with this rank) when ok is false.
void check(bool ok, const std::string& what);

}  // namespace ember::dist_test
