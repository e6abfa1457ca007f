// tests/distributed/dist_checks.h: what the scenarios of ember_dist_worker share -- the failure
// counter and check(), and the DistributedDataParallel scenarios (dist_ddp_checks.cpp).
#pragma once

#include <string>

#include "ember/device.h"

namespace ember::dist_test {

extern int failures;
// Counts and prints a failure (with this rank) when ok is false.
void check(bool ok, const std::string& what);

// DDP against single-process references computed by every rank itself: the MLP and the CNN with
// BatchNorm, no_sync, gradient_as_bucket_view, small buckets, find_unused_parameters, the errors.
int run_ddp_checks(Device device);
// Rank 1 dies (SIGKILL) in the middle of DDP training; the others must fail within the timeout.
int run_ddp_rank_killed();

}  // namespace ember::dist_test
