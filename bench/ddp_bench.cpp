// bench/ddp_bench.cpp: ember_ddp_bench, the data-parallel benchmarks, run by bench/ddp_bench.sh
// under `ember run` (or alone, for the single-process baseline):
//   ember_ddp_bench allreduce [MiB...]   all_reduce (sum, float32) of each size through the default
//                                       group: median time, algorithm and bus bandwidth (GB/s)
//   ember_ddp_bench step MODEL BATCH     median time of an SGD training step of MODEL (mlp:
//                                       784-256-10, the CLI's; wide: 784-1024-1024-1024-10) with
//                                       BATCH examples per process: plain when WORLD_SIZE is unset,
//                                       else through DistributedDataParallel, with the median
//                                       all-reduce time, the part of it backward waited for, and
//                                       the share hidden behind backward.
// Rank 0 prints one line per row: "name value ...", easy for the script to parse.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace {

using namespace ember;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int allreduce(const std::vector<int>& mib) {
  const int world = distributed::get_world_size(), rank = distributed::get_rank();
  for (int m : mib) {
    const int64_t n = int64_t{m} * (1 << 20) / 4;
    Tensor t = ones({n});
    const int iterations = m >= 64 ? 5 : 20;
    distributed::all_reduce(t);  // warm up (connections, pages)
    std::vector<double> times;
    for (int i = 0; i < iterations; ++i) {
      distributed::barrier();
      auto t0 = Clock::now();
      distributed::all_reduce(t);
      times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    double s = median(times);
    double algbw = static_cast<double>(n) * 4 / s / 1e9;
    double busbw = algbw * 2.0 * (world - 1) / world;
    if (rank == 0)
      std::printf("allreduce %d MiB %.4f ms algbw %.3f GB/s busbw %.3f GB/s\n", m, s * 1e3, algbw,
                  busbw);
  }
  return 0;
}

nn::Sequential make_model(const std::string& name) {
  if (name == "mlp") return nn::Sequential(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
  EMBER_CHECK(name == "wide", "model is mlp or wide, not ", name);
  return nn::Sequential(nn::Linear(784, 1024), nn::ReLU(), nn::Linear(1024, 1024), nn::ReLU(),
                        nn::Linear(1024, 1024), nn::ReLU(), nn::Linear(1024, 10));
}

int step(const std::string& name, int64_t batch, int steps, bool view) {
  const bool ddp = distributed::is_initialized();
  manual_seed(0);
  nn::Sequential model = make_model(name);
  std::shared_ptr<nn::Module> net = model.ptr();
  std::shared_ptr<nn::parallel::DistributedDataParallelImpl> wrapped;
  if (ddp) {
    wrapped =
        nn::parallel::DistributedDataParallel(model.ptr(), {.gradient_as_bucket_view = view}).ptr();
    net = wrapped;
  }
  optim::SGD opt(model->parameters(), {.lr = 0.01, .momentum = 0.9});
  Tensor x = randn({batch, 784});
  Tensor y = randint(0, 10, {batch});
  std::vector<double> times, comm, exposed;
  for (int i = 0; i < steps + 5; ++i) {
    auto t0 = Clock::now();
    opt.zero_grad();
    nn::F::cross_entropy(net->forward(x), y).backward();
    opt.step();
    if (i < 5) continue;  // warm-up steps
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (wrapped) {
      comm.push_back(wrapped->last_stats().comm_seconds);
      exposed.push_back(wrapped->last_stats().exposed_seconds);
    }
  }
  if (ddp && distributed::get_rank() != 0) return 0;
  int64_t params = 0;
  for (const Tensor& p : model->parameters()) params += p.numel();
  std::printf("step %s batch %lld params %lld %s %.4f ms", name.c_str(),
              static_cast<long long>(batch), static_cast<long long>(params),
              ddp ? (view ? "ddp-view" : "ddp") : "single", median(times) * 1e3);
  if (wrapped) {
    double c = median(comm), e = median(exposed);
    std::printf(" buckets %zu allreduce %.4f ms exposed %.4f ms hidden %.1f%%",
                wrapped->bucket_indices().size(), c * 1e3, e * 1e3,
                c > 0 ? 100.0 * std::max(0.0, 1.0 - e / c) : 0.0);
  }
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string what = argc > 1 ? argv[1] : "";
    const char* world = std::getenv("WORLD_SIZE");
    if (world && *world) distributed::init_process_group({.backend = "gloo"});
    int rc = 2;
    if (what == "allreduce") {
      std::vector<int> sizes;
      for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
      if (sizes.empty()) sizes = {1, 4, 16, 64, 256};
      rc = allreduce(sizes);
    } else if (what == "step" && argc >= 4) {
      rc = step(argv[2], std::atoll(argv[3]), argc > 4 ? std::atoi(argv[4]) : 40,
                argc > 5 && std::string(argv[5]) == "view");
    } else {
      std::fprintf(stderr,
                   "usage: ember_ddp_bench allreduce [MiB...] | step mlp|wide BATCH "
                   "[STEPS [view]]\n");
    }
    if (distributed::is_initialized()) distributed::destroy_process_group();
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember_ddp_bench: %s\n", e.what());
    return 1;
  }
}
