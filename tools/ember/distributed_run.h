// tools/ember/distributed_run.h: `ember train` on several processes -- joining the job that
// `ember run` (or torchrun) started, each rank's device, sums over the ranks, and
// --nproc-per-node, which starts such a job on this machine itself.
#pragma once

#include <string>
#include <vector>

#include "ember/device.h"

namespace ember::cli {

struct RankInfo {
  bool distributed = false;  // started by a launcher (WORLD_SIZE set): the process group is up
  int rank = 0, world = 1, local_rank = 0;
  bool is_main() const { return rank == 0; }  // writes metrics, curves and checkpoints
};

// Under `ember run` or torchrun (WORLD_SIZE set in the environment): init_process_group with
// env:// (Gloo for CPU tensors, NCCL for CUDA tensors where built) and this rank's place in the
// job. Otherwise a single-process RankInfo.
RankInfo join_job_if_launched();
// Ends the process group of a distributed run (all ranks call it).
void leave_job(const RankInfo& job);

// --device for this rank: "auto" and "cuda" take cuda:LOCAL_RANK when CUDA is available (auto
// falls back to the CPU), an explicit device is used as given.
Device rank_device(const std::string& spec, const RankInfo& job);

// Element-wise sums of `values` over the ranks (values itself when not distributed).
std::vector<double> sum_over_ranks(const std::vector<double>& values, const RankInfo& job);

// --nproc-per-node N outside a launched job: runs this same command line as N processes of a job
// on this machine (through `ember run`'s launcher, on a free loopback port), without the option.
// Returns the launcher's exit status.
int relaunch_as_job(int argc, char** argv, int nproc_per_node, bool oversubscribe);

}  // namespace ember::cli
