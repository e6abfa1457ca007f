// nn/ddp_reducer.h: DistributedDataParallel's gradient reduction (c10d's Reducer) -- the bucket
// assignment, the per-parameter hooks that fill buckets as backward accumulates gradients,
// asynchronous all-reduces launched bucket by bucket in order, and the end-of-backward callback
// that waits for them and writes the averaged gradients back.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/autograd.h"
#include "ember/distributed.h"
#include "ember/nn/parallel.h"

namespace ember::nn::parallel::detail {

// c10d's compute_bucket_assignment_by_size: tensors[i] (with index tensor_indices[i], or i when
// tensor_indices is empty) joins the open bucket of its (dtype, device); a bucket is closed once
// its bytes reach the current limit, and each closed bucket moves that key to the next limit (the
// last one repeats). Remaining open buckets follow, in the order their keys first appeared.
// Without tensor_indices the buckets are sorted by their smallest index.
std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(
    const std::vector<Tensor>& tensors, const std::vector<int64_t>& size_limits,
    const std::vector<size_t>& tensor_indices = {});

class Reducer {
 public:
  // params: the module's parameters that require grad (all on one device), names for errors.
  Reducer(std::vector<Tensor> params, std::vector<std::string> names,
          std::shared_ptr<distributed::ProcessGroup> group,
          const DistributedDataParallelOptions& options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Called after a forward that should synchronize the next backward: resets the iteration and,
  // with find_unused_parameters, marks the parameters the outputs' graph does not reach.
  void prepare_for_backward(const std::vector<Tensor>& outputs);
  // Called after a forward whose backward accumulates locally (no_sync, no grad mode).
  void no_sync_forward();
  const std::vector<std::vector<size_t>>& buckets() const { return bucket_params_; }
  const DistributedDataParallelStats& stats() const { return stats_; }

 private:
  struct Bucket {
    std::vector<size_t> params;    // indices into params_
    std::vector<int64_t> offsets;  // each parameter's first element in flat
    Tensor flat;                   // (elements,) in the parameters' dtype, on their device
    size_t pending = 0;            // parameters not ready yet this iteration
    std::shared_ptr<distributed::Work> work;
  };

  // Throws when a synchronized backward started reducing and never finished.
  void check_previous_finished();
  void on_gradient(size_t param);  // the post-accumulate hook of params_[param]
  void mark_unused(size_t param);  // ready without a gradient from this backward
  void mark_ready(size_t param);
  void launch_ready_buckets();
  void finalize();  // the end-of-backward callback
  void wait_for_launched();
  std::vector<bool> globally_used();

  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  std::shared_ptr<distributed::ProcessGroup> group_;
  DistributedDataParallelOptions options_;
  std::vector<std::vector<size_t>> bucket_params_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // param -> bucket
  std::vector<Tensor> slots_;      // param -> its view of its bucket, shaped as the parameter
  std::vector<std::shared_ptr<autograd::Node>> accumulators_;  // kept alive for graph walks
  std::vector<autograd::HookHandle> hooks_;

  // The iteration in progress.
  bool expecting_ = false;        // the last forward asked for a synchronized backward
  bool callback_queued_ = false;  // finalize is queued on the running backward pass
  std::vector<bool> ready_;       // this parameter's gradient is in its bucket
  std::vector<bool> used_;        // this parameter got a gradient on this rank
  size_t next_bucket_ = 0;        // buckets before it are launched
  std::chrono::steady_clock::time_point backward_end_;
  DistributedDataParallelStats stats_;
};

}  // namespace ember::nn::parallel::detail
