// tools/ember/distributed_run.cpp: joining a launched job, each rank's device, sums over ranks and
// the --nproc-per-node relaunch.
#include "distributed_run.h"

#include <unistd.h>

#include <cstdlib>

#include "ember/creation.h"
#include "ember/cuda.h"
#include "ember/distributed.h"
#include "launcher.h"

namespace ember::cli {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

}  // namespace

RankInfo join_job_if_launched() {
  RankInfo job;
  const char* world = std::getenv("WORLD_SIZE");
  if (!world || !*world) return job;
  distributed::init_process_group({.backend = "auto", .init_method = "env://"});
  job.distributed = true;
  job.rank = distributed::get_rank();
  job.world = distributed::get_world_size();
  job.local_rank = env_int("LOCAL_RANK", job.rank);
  return job;
}

void leave_job(const RankInfo& job) {
  if (job.distributed) distributed::destroy_process_group();
}

Device rank_device(const std::string& spec, const RankInfo& job) {
  if (!job.distributed || (spec != "auto" && spec != "cuda")) {
    if (spec == "auto") return best_device();
    return resolve_device(Device(spec));
  }
  if (spec == "auto" && !cuda::is_available()) return Device(kCPU);
  EMBER_CHECK_KIND(Device, cuda::is_available() && job.local_rank < cuda::device_count(),
                   "--device ", spec, ": rank ", job.rank, " (local rank ", job.local_rank,
                   ") needs cuda:", job.local_rank, " but ", cuda::device_count(),
                   " CUDA device(s) are available; start at most that many processes per node");
  return Device(kCUDA, job.local_rank);
}

std::vector<double> sum_over_ranks(const std::vector<double>& values, const RankInfo& job) {
  if (!job.distributed) return values;
  // On the CPU: the default group routes CPU tensors through Gloo.
  Tensor t = from_vector(values);
  distributed::all_reduce(t, distributed::ReduceOp::SUM);
  return t.to_vector<double>();
}

int relaunch_as_job(int argc, char** argv, int nproc_per_node, bool oversubscribe) {
  LaunchOptions launch;
  launch.nproc_per_node = nproc_per_node;
  launch.oversubscribe = oversubscribe;
  launch.master_port = 0;  // a free port of this machine
  launch.command.push_back("/proc/self/exe");
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--nproc-per-node" || a == "--nproc_per_node") {
      ++i;  // and its value
      continue;
    }
    if (a.rfind("--nproc-per-node=", 0) == 0 || a.rfind("--nproc_per_node=", 0) == 0) continue;
    launch.command.push_back(a);
  }
  // /proc/self/exe would name the launcher's child once exec'd; resolve it to this binary.
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) launch.command[0] = std::string(self, static_cast<size_t>(n));
  return run_launcher(launch);
}

}  // namespace ember::cli
