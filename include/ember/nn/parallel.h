// ember/nn/parallel.h: data-parallel training -- DistributedDataParallel (one process per device,
// gradients averaged across the processes of a group in buckets whose all-reduce overlaps
// backward), as torch.nn.parallel.DistributedDataParallel, and DataParallel (one process, the
// batch split over several devices), as torch.nn.DataParallel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/autograd.h"
#include "ember/distributed.h"
#include "ember/nn/module.h"

namespace ember::nn::parallel {

namespace detail {
class Reducer;
}

struct DistributedDataParallelOptions {
  // The processes training together (nullptr: the default group of init_process_group).
  std::shared_ptr<distributed::ProcessGroup> process_group = nullptr;
  // Gradients are reduced in buckets of about this size; the first bucket (the last parameters,
  // whose gradients come first) holds about 1 MiB so that communication starts early.
  double bucket_cap_mb = 25.0;
  // Training-mode forwards copy rank 0's buffers (BatchNorm's running statistics) to every rank
  // first.
  bool broadcast_buffers = true;
  // Parameters the forward pass did not use (found by walking the graph from its outputs) count
  // as ready at once, with zero gradients; parameters no rank used keep their grad untouched.
  // Without it, a parameter that gets no gradient is an error at the end of backward.
  bool find_unused_parameters = false;
  // Each parameter's grad becomes a view of its bucket, saving the copies in and out.
  bool gradient_as_bucket_view = false;
};

// The communication of the last synchronized backward pass (for benchmarks and logs).
struct DistributedDataParallelStats {
  int64_t buckets = 0;            // all-reduces launched
  double comm_seconds = 0;        // how long they ran, summed
  double exposed_seconds = 0;     // how long the end of backward waited for them
  double hidden_fraction() const  // the share of comm_seconds that overlapped backward
  {
    return comm_seconds > 0 ? std::max(0.0, 1.0 - exposed_seconds / comm_seconds) : 0.0;
  }
};

// Wraps a module (registered as the child "module", so state_dict() names are "module." + the
// module's; module().state_dict() has its own names, which checkpoints should use). At
// construction every rank of the group must pass a module with the same parameter shapes and
// dtypes (checked), and rank 0's parameters and buffers are copied to every rank. Then each
// forward (under grad mode and outside no_sync) makes the next backward average every
// parameter's gradient over the group: as each parameter's gradient is accumulated, it is
// copied into its bucket; a bucket whose gradients are all there is divided by the group size
// and all-reduced asynchronously, buckets in order, while backward goes on; backward returns
// once every bucket is reduced and copied back into the grads. Every rank must run the same
// forward and backward passes. Gradients of float16/bfloat16 parameters are reduced in their
// dtype; parameters must all be on one device.
class DistributedDataParallelImpl : public Module {
 public:
  explicit DistributedDataParallelImpl(std::shared_ptr<Module> module,
                                       DistributedDataParallelOptions options = {});
  ~DistributedDataParallelImpl() override;

  // The module's forward (for modules mapping one tensor to one tensor).
  Tensor forward(const Tensor& input) override;
  // Any other forward: ddp->forward_with([&] { return model->forward(a, b); }) runs the call
  // between DDP's before- and after-forward steps; it returns a Tensor or a vector of them.
  template <class F>
  auto forward_with(F&& call) -> std::invoke_result_t<F> {
    before_forward();
    auto outputs = call();
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(outputs)>, Tensor>) {
      after_forward({outputs});
    } else {
      after_forward(std::vector<Tensor>(outputs.begin(), outputs.end()));
    }
    return outputs;
  }

  Module& module() const { return *module_; }
  const std::shared_ptr<Module>& module_ptr() const { return module_; }
  const distributed::ProcessGroup& process_group() const { return *group_; }

  // torch's no_sync(): while the guard lives, forwards make backward accumulate gradients
  // locally; the first forward and backward after it reduce the sum.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallelImpl& ddp)
        : ddp_(&ddp), previous_(ddp.require_backward_grad_sync_) {
      ddp.require_backward_grad_sync_ = false;
    }
    ~NoSyncGuard() { ddp_->require_backward_grad_sync_ = previous_; }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallelImpl* ddp_;
    bool previous_;
  };
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  // The buckets, each a list of indices into module().parameters(), in reduction order.
  std::vector<std::vector<size_t>> bucket_indices() const;
  const DistributedDataParallelStats& last_stats() const;

  // What forward does around the module's forward (forward_with calls them).
  void before_forward();
  void after_forward(const std::vector<Tensor>& outputs);

 private:
  std::shared_ptr<Module> module_;
  std::shared_ptr<distributed::ProcessGroup> group_;
  DistributedDataParallelOptions options_;
  std::unique_ptr<detail::Reducer> reducer_;
  bool require_backward_grad_sync_ = true;
};
EMBER_BUILTIN_MODULE_WITH(DistributedDataParallel,
                          DistributedDataParallel(std::shared_ptr<Module> module,
                                                  const DistributedDataParallelOptions& options)
                          : ModuleHolder(std::move(module), options){});

struct DataParallelOptions {
  // The devices to run on (default: every CUDA device; with none, the module runs as it is).
  std::vector<Device> device_ids = {};
  // Where the outputs are gathered (default: device_ids[0]).
  std::optional<Device> output_device = std::nullopt;
  int64_t dim = 0;  // the input's batch dim, split over the devices
};

// torch.nn.DataParallel: each forward splits the input along dim into one chunk per device (as
// torch.chunk), runs the module itself on device_ids[0] and a replica (Module::clone(), made once,
// its parameters and buffers refreshed from the module's at every forward) on each other device,
// on threads of their own, and concatenates the outputs on output_device. Gradients flow back to
// every chunk; when the backward pass ends, each replica's parameter gradients are added into the
// module's own, so the module's parameters hold the gradient of the whole batch, as in PyTorch.
// Buffer updates (BatchNorm's running statistics) are kept from device_ids[0] only. The module
// must be on device_ids[0]. For several processes or machines use DistributedDataParallel.
class DataParallelImpl : public Module {
 public:
  explicit DataParallelImpl(std::shared_ptr<Module> module, DataParallelOptions options = {});
  ~DataParallelImpl() override;
  Tensor forward(const Tensor& input) override;
  Module& module() const { return *module_; }
  const std::vector<Device>& device_ids() const { return devices_; }

 private:
  void make_replicas();
  void add_replica_grads();  // the end-of-backward callback

  std::shared_ptr<Module> module_;
  std::vector<Device> devices_;
  Device output_device_;
  int64_t dim_;
  std::vector<std::shared_ptr<Module>> replicas_;  // replicas_[i] runs on devices_[i + 1]
  std::vector<autograd::HookHandle> hooks_;
  bool callback_queued_ = false;
};
EMBER_BUILTIN_MODULE_WITH(DataParallel, DataParallel(std::shared_ptr<Module> module,
                                                     const DataParallelOptions& options)
                          : ModuleHolder(std::move(module), options){});

}  // namespace ember::nn::parallel

namespace ember::nn {
// torch.nn.DataParallel is also reachable as nn.DataParallel.
using parallel::DataParallel;
using parallel::DataParallelImpl;
using parallel::DataParallelOptions;
}  // namespace ember::nn
