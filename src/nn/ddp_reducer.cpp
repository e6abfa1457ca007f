// nn/ddp_reducer.cpp: DistributedDataParallel's Reducer -- buckets, gradient hooks, in-order
// asynchronous all-reduces and the end-of-backward callback.
#include "nn/ddp_reducer.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "ember/creation.h"
#include "ember/ops.h"

namespace ember::nn::parallel::detail {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kFirstBucketBytes = int64_t{1} << 20;  // c10d's _DEFAULT_FIRST_BUCKET_BYTES

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Whether two tensors are the same view of the same memory.
bool same_view(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.storage() == b.storage() &&
         a.storage_offset() == b.storage_offset() && a.sizes() == b.sizes() &&
         a.strides() == b.strides() && a.dtype() == b.dtype();
}

}  // namespace

std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(
    const std::vector<Tensor>& tensors, const std::vector<int64_t>& size_limits,
    const std::vector<size_t>& tensor_indices) {
  EMBER_CHECK(!size_limits.empty(), "[compute_bucket_assignment_by_size] no size limits given");
  EMBER_CHECK(tensor_indices.empty() || tensor_indices.size() == tensors.size(),
              "[compute_bucket_assignment_by_size] ", tensor_indices.size(), " tensor indices for ",
              tensors.size(), " tensors");
  struct Open {
    std::vector<size_t> indices;
    int64_t bytes = 0;
    size_t limit = 0;  // index into size_limits
  };
  // One open bucket per (dtype, device), in the order the keys first appear.
  std::vector<std::pair<std::pair<DType, std::string>, Open>> open;
  std::vector<std::vector<size_t>> result;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    std::pair<DType, std::string> key{t.dtype(), t.device().str()};
    auto it = std::find_if(open.begin(), open.end(), [&](const auto& o) { return o.first == key; });
    if (it == open.end()) it = open.insert(open.end(), {key, Open{}});
    Open& bucket = it->second;
    bucket.indices.push_back(tensor_indices.empty() ? i : tensor_indices[i]);
    bucket.bytes += static_cast<int64_t>(t.nbytes());
    if (bucket.bytes >= size_limits[bucket.limit]) {
      result.push_back(std::move(bucket.indices));
      bucket.indices.clear();
      bucket.bytes = 0;
      if (bucket.limit + 1 < size_limits.size()) ++bucket.limit;
    }
  }
  for (auto& [key, bucket] : open)
    if (!bucket.indices.empty()) result.push_back(std::move(bucket.indices));
  if (tensor_indices.empty()) {
    std::stable_sort(result.begin(), result.end(), [](const auto& a, const auto& b) {
      return *std::min_element(a.begin(), a.end()) < *std::min_element(b.begin(), b.end());
    });
  }
  return result;
}

Reducer::Reducer(std::vector<Tensor> params, std::vector<std::string> names,
                 std::shared_ptr<distributed::ProcessGroup> group,
                 const DistributedDataParallelOptions& options)
    : params_(std::move(params)),
      names_(std::move(names)),
      group_(std::move(group)),
      options_(options) {
  const size_t n = params_.size();
  EMBER_CHECK(options_.bucket_cap_mb > 0,
              "[DistributedDataParallel] bucket_cap_mb must be "
              "positive, got ",
              options_.bucket_cap_mb);
  // Gradients arrive roughly in reverse order of the parameters (the last layer's first): the
  // buckets are filled in that order, the first one small so that communication starts early.
  std::vector<Tensor> reversed(params_.rbegin(), params_.rend());
  std::vector<size_t> indices(n);
  for (size_t i = 0; i < n; ++i) indices[i] = n - 1 - i;
  auto cap = static_cast<int64_t>(options_.bucket_cap_mb * 1024.0 * 1024.0);
  bucket_params_ = compute_bucket_assignment_by_size(reversed, {kFirstBucketBytes, cap}, indices);

  bucket_of_.resize(n);
  slots_.resize(n);
  for (size_t b = 0; b < bucket_params_.size(); ++b) {
    Bucket bucket;
    bucket.params = bucket_params_[b];
    int64_t elements = 0;
    for (size_t p : bucket.params) {
      bucket.offsets.push_back(elements);
      elements += params_[p].numel();
      bucket_of_[p] = b;
    }
    const Tensor& first = params_[bucket.params.front()];
    bucket.flat = zeros({elements}, {.dtype = first.dtype(), .device = first.device()});
    for (size_t k = 0; k < bucket.params.size(); ++k) {
      size_t p = bucket.params[k];
      slots_[p] =
          bucket.flat.narrow(0, bucket.offsets[k], params_[p].numel()).view(params_[p].sizes());
    }
    buckets_.push_back(std::move(bucket));
  }
  ready_.assign(n, false);
  used_.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    accumulators_.push_back(autograd::grad_accumulator(params_[i]));
    hooks_.push_back(params_[i].register_post_accumulate_grad_hook(
        [this, i](const Tensor&) { on_gradient(i); }));
  }
}

Reducer::~Reducer() {
  for (auto& h : hooks_) h.remove();
  // Collectives still running read the buckets: let them finish, whatever they report.
  for (auto& b : buckets_) {
    if (!b.work) continue;
    try {
      b.work->wait();
    } catch (const std::exception&) {
    }
  }
}

void Reducer::wait_for_launched() {
  for (auto& b : buckets_) {
    if (!b.work) continue;
    auto work = std::move(b.work);
    work->wait();
  }
}

void Reducer::no_sync_forward() {
  check_previous_finished();
  expecting_ = false;
}

void Reducer::check_previous_finished() {
  if (!expecting_) return;
  bool started = std::any_of(ready_.begin(), ready_.end(), [](bool r) { return r; }) &&
                 std::any_of(used_.begin(), used_.end(), [](bool u) { return u; });
  if (!started) return;  // a forward without a backward: nothing was reduced, start again
  expecting_ = false;
  try {
    wait_for_launched();
  } catch (const std::exception&) {
  }
  EMBER_THROW(Value,
              "[DistributedDataParallel] the previous backward pass stopped before its "
              "gradients were all reduced (did it throw?), so this rank's collectives are no "
              "longer in step with the other ranks'; restart the process group (and the job)");
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  check_previous_finished();
  expecting_ = true;
  callback_queued_ = false;
  next_bucket_ = 0;
  std::fill(ready_.begin(), ready_.end(), false);
  std::fill(used_.begin(), used_.end(), false);
  for (auto& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
  }
  if (!options_.find_unused_parameters) return;
  // Walk the graph from the outputs: parameters whose accumulator it never meets get no
  // gradient in this backward and are ready now.
  std::unordered_set<const autograd::Node*> seen;
  std::vector<autograd::Node*> stack;
  for (const Tensor& out : outputs) {
    if (!out.defined() || !out.requires_grad()) continue;
    std::shared_ptr<autograd::Node> fn =
        out.grad_fn() ? out.grad_fn() : autograd::grad_accumulator(out);
    if (seen.insert(fn.get()).second) stack.push_back(fn.get());
  }
  while (!stack.empty()) {
    autograd::Node* node = stack.back();
    stack.pop_back();
    for (const autograd::Edge& e : node->next_edges())
      if (e.fn && seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
  }
  for (size_t i = 0; i < params_.size(); ++i)
    if (!seen.count(accumulators_[i].get())) mark_unused(i);
}

void Reducer::mark_unused(size_t param) {
  // A gradient accumulated earlier (under no_sync) still counts; otherwise zeros.
  NoGradGuard no_grad;
  const Tensor& g = params_[param].grad();
  if (g.defined() && !same_view(g, slots_[param])) {
    slots_[param].copy_(g);
  } else if (!g.defined()) {
    slots_[param].zero_();
  }
  mark_ready(param);
}

void Reducer::on_gradient(size_t param) {
  if (!expecting_) return;  // no_sync, or a backward without a DDP forward: accumulate locally
  // The engine accumulates each leaf once per backward pass, and finalize ends the iteration.
  EMBER_CHECK(!ready_[param], "[DistributedDataParallel] internal: parameter '", names_[param],
              "' was marked ready twice in one backward pass");
  if (!callback_queued_) {
    autograd::queue_callback([this] { finalize(); });
    callback_queued_ = true;
  }
  used_[param] = true;
  NoGradGuard no_grad;
  const Tensor& g = params_[param].grad();
  if (!same_view(g, slots_[param])) {
    slots_[param].copy_(g);
    if (options_.gradient_as_bucket_view) params_[param].mutable_grad() = slots_[param];
  }
  mark_ready(param);
}

void Reducer::mark_ready(size_t param) {
  ready_[param] = true;
  if (--buckets_[bucket_of_[param]].pending == 0) launch_ready_buckets();
}

void Reducer::launch_ready_buckets() {
  const int world = group_->size();
  // In order, so that every rank issues the same collectives in the same order.
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    Bucket& b = buckets_[next_bucket_++];
    if (world == 1) continue;
    // The mean over the ranks (the sum, then / world on the collective's own thread or stream,
    // off the backward pass's critical path).
    b.work = distributed::all_reduce(b.flat, distributed::ReduceOp::AVG, group_.get(), true);
  }
}

std::vector<bool> Reducer::globally_used() {
  std::vector<int32_t> mine(used_.begin(), used_.end());
  Tensor flags = from_vector(mine).to(params_.front().device());
  distributed::all_reduce(flags, distributed::ReduceOp::MAX, group_.get());
  auto all = flags.cpu().to_vector<int32_t>();
  return std::vector<bool>(all.begin(), all.end());
}

void Reducer::finalize() {
  callback_queued_ = false;
  std::vector<size_t> missing;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!ready_[i]) missing.push_back(i);
  if (!missing.empty() && !options_.find_unused_parameters) {
    expecting_ = false;
    wait_for_launched();
    std::string names;
    for (size_t k = 0; k < missing.size() && k < 8; ++k)
      names += (k ? ", " : "") + std::string("'") + names_[missing[k]] + "'";
    if (missing.size() > 8) names += ", ...";
    EMBER_THROW(Value, "[DistributedDataParallel] ", missing.size(), " parameter(s) got no ",
                "gradient in this backward pass: ", names,
                ". DDP reduces every parameter that requires grad: make every forward output "
                "part of the loss, or pass find_unused_parameters = true when parts of the model "
                "may be unused");
  }
  for (size_t i : missing) mark_unused(i);
  const auto wait_start = Clock::now();
  stats_ = {};
  for (auto& b : buckets_) {
    if (!b.work) continue;
    auto work = std::move(b.work);
    work->wait();
    ++stats_.buckets;
    stats_.comm_seconds += work->run_seconds();
  }
  stats_.exposed_seconds = seconds_since(wait_start);
  std::vector<bool> used(params_.size(), true);
  if (options_.find_unused_parameters) used = group_->size() > 1 ? globally_used() : used_;
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!used[i]) continue;  // no rank used it: its grad stays as it was
    Tensor& g = params_[i].mutable_grad();
    if (options_.gradient_as_bucket_view) {
      if (!same_view(g, slots_[i])) g = slots_[i];
    } else if (g.defined() && g.sizes() == slots_[i].sizes()) {
      g.copy_(slots_[i]);
    } else {
      g = slots_[i].clone();
    }
  }
  expecting_ = false;
}

}  // namespace ember::nn::parallel::detail
