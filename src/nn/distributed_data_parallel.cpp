// nn/distributed_data_parallel.cpp: DistributedDataParallel's module side -- the check that every
// rank wraps the same parameters, rank 0's parameters and buffers copied to all at construction,
// buffers broadcast before training forwards, and the forward around the Reducer.
#include <algorithm>
#include <map>

#include "ember/autograd.h"
#include "ember/creation.h"
#include "ember/nn/parallel.h"
#include "ember/ops.h"
#include "nn/ddp_reducer.h"

namespace ember::nn::parallel {

namespace {

using ember::detail::str_cat;

// Broadcasts in pieces of at most this many bytes (c10d's _sync_module_states uses 250 MiB).
constexpr int64_t kBroadcastBytes = int64_t{250} << 20;

std::string describe(const int64_t* meta, size_t param, const std::vector<std::string>& names) {
  auto dtype = static_cast<DType>(meta[0]);
  Shape shape(meta + 2, meta + 2 + meta[1]);
  return str_cat("parameter ", param, param < names.size() ? " ('" + names[param] + "')" : "", " ",
                 shape_str(shape), " ", dtype_name(dtype));
}

// Every rank must wrap parameters of the same count, shapes and dtypes (c10d's
// _verify_param_shape_across_processes): every rank gathers every rank's list and fails alike.
void verify_same_parameters(distributed::ProcessGroup& group, const StateDict& params,
                            Device device) {
  if (group.size() == 1) return;
  std::vector<int64_t> meta{static_cast<int64_t>(params.size())};
  std::vector<size_t> starts;
  std::vector<std::string> names;
  for (const auto& [name, p] : params) {
    starts.push_back(meta.size());
    names.push_back(name);
    meta.push_back(static_cast<int64_t>(p.dtype()));
    meta.push_back(p.dim());
    for (int64_t s : p.sizes()) meta.push_back(s);
  }
  const int world = group.size();
  Tensor length = full({1}, static_cast<int64_t>(meta.size()), {.dtype = kInt64, .device = device});
  Tensor lengths = empty({world}, {.dtype = kInt64, .device = device});
  distributed::all_gather_into_tensor(lengths, length, &group);
  auto all_lengths = lengths.cpu().to_vector<int64_t>();
  int64_t longest = *std::max_element(all_lengths.begin(), all_lengths.end());
  std::vector<int64_t> padded = meta;
  padded.resize(static_cast<size_t>(longest), -1);
  Tensor mine = from_vector(padded).to(device);
  Tensor every = empty({world * longest}, {.dtype = kInt64, .device = device});
  distributed::all_gather_into_tensor(every, mine, &group);
  auto all = every.cpu().to_vector<int64_t>();
  const int64_t* ref = all.data();  // rank 0's
  for (int r = 1; r < world; ++r) {
    const int64_t* other = all.data() + static_cast<size_t>(r * longest);
    if (std::equal(ref, ref + longest, other)) continue;
    if (ref[0] != other[0])
      EMBER_THROW(Value, "[DistributedDataParallel] rank ", r, "'s module has ", other[0],
                  " parameters but rank 0's has ", ref[0], "; every rank must wrap the same model");
    // The first parameter that differs, described from both lists.
    size_t pos0 = 1, pos1 = 1;
    for (int64_t i = 0; i < ref[0]; ++i) {
      size_t len0 = 2 + static_cast<size_t>(ref[pos0 + 1]);
      size_t len1 = 2 + static_cast<size_t>(other[pos1 + 1]);
      if (len0 != len1 || !std::equal(ref + pos0, ref + pos0 + len0, other + pos1)) {
        EMBER_THROW(Value, "[DistributedDataParallel] rank ", r,
                    "'s module differs from rank 0's: ",
                    describe(other + pos1, static_cast<size_t>(i), names), " on rank ", r, ", ",
                    describe(ref + pos0, static_cast<size_t>(i), names),
                    " on rank 0; every rank must wrap the same model");
      }
      pos0 += len0;
      pos1 += len1;
    }
  }
}

// Rank 0's values into every rank's tensors, dtype by dtype, a few flat broadcasts
// (c10d's _sync_module_states).
void broadcast_from_rank0(distributed::ProcessGroup& group, const std::vector<Tensor>& tensors) {
  if (group.size() == 1 || tensors.empty()) return;
  NoGradGuard no_grad;
  std::map<std::pair<int, std::string>, std::vector<Tensor>> by_kind;
  std::vector<std::pair<int, std::string>> order;
  for (const Tensor& t : tensors) {
    if (t.numel() == 0) continue;
    std::pair<int, std::string> key{static_cast<int>(t.dtype()), t.device().str()};
    if (!by_kind.count(key)) order.push_back(key);
    by_kind[key].push_back(t);
  }
  for (const auto& key : order) {
    const auto& list = by_kind[key];
    for (size_t begin = 0; begin < list.size();) {
      size_t end = begin;
      int64_t bytes = 0;
      std::vector<Tensor> flat;
      while (
          end < list.size() &&
          (end == begin || bytes + static_cast<int64_t>(list[end].nbytes()) <= kBroadcastBytes)) {
        bytes += static_cast<int64_t>(list[end].nbytes());
        flat.push_back(list[end].reshape({-1}));
        ++end;
      }
      Tensor buffer = cat(flat);
      distributed::broadcast(buffer, 0, &group);
      int64_t offset = 0;
      for (size_t i = begin; i < end; ++i) {
        Tensor t = list[i];
        t.copy_(buffer.narrow(0, offset, t.numel()).view(t.sizes()));
        offset += t.numel();
      }
      begin = end;
    }
  }
}

}  // namespace

DistributedDataParallelImpl::DistributedDataParallelImpl(std::shared_ptr<Module> module,
                                                         DistributedDataParallelOptions options)
    : Module("DistributedDataParallel"), module_(std::move(module)), options_(std::move(options)) {
  EMBER_CHECK(module_ != nullptr, "[DistributedDataParallel] the module is null");
  group_ = options_.process_group ? options_.process_group : distributed::default_group();
  register_module("module", module_);
  StateDict named = module_->named_parameters();
  EMBER_CHECK(!named.empty(),
              "[DistributedDataParallel] the module has no parameters; "
              "DistributedDataParallel averages gradients of parameters, so wrap a module that "
              "has some");
  Device device = named.front().second.device();
  for (const auto& [name, p] : named)
    EMBER_CHECK_KIND(Device, p.device() == device,
                     "[DistributedDataParallel] the module's parameters are on more than one "
                     "device ('",
                     named.front().first, "' on ", device.str(), ", '", name, "' on ",
                     p.device().str(),
                     "); DistributedDataParallel takes a module on one device per process: move "
                     "it with module->to(device)");
  verify_same_parameters(*group_, named, device);
  std::vector<Tensor> state = module_->parameters();
  for (const Tensor& b : module_->buffers()) state.push_back(b);
  broadcast_from_rank0(*group_, state);

  std::vector<Tensor> params;
  std::vector<std::string> names;
  for (const auto& [name, p] : named) {
    if (!p.requires_grad()) continue;
    params.push_back(p);
    names.push_back(name);
  }
  EMBER_CHECK(!params.empty(),
              "[DistributedDataParallel] none of the module's parameters "
              "requires grad; there is nothing to synchronize");
  reducer_ =
      std::make_unique<detail::Reducer>(std::move(params), std::move(names), group_, options_);
}

DistributedDataParallelImpl::~DistributedDataParallelImpl() = default;

void DistributedDataParallelImpl::before_forward() {
  // Rank 0's buffers (running statistics) for every training forward: eval and no-grad forwards
  // issue no collective, so one rank may evaluate alone.
  if (options_.broadcast_buffers && group_->size() > 1 && autograd::is_grad_enabled() &&
      module_->is_training()) {
    std::vector<Tensor> buffers = module_->buffers();
    if (!buffers.empty()) broadcast_from_rank0(*group_, buffers);
  }
}

void DistributedDataParallelImpl::after_forward(const std::vector<Tensor>& outputs) {
  if (autograd::is_grad_enabled() && require_backward_grad_sync_) {
    reducer_->prepare_for_backward(outputs);
  } else {
    reducer_->no_sync_forward();
  }
}

Tensor DistributedDataParallelImpl::forward(const Tensor& input) {
  before_forward();
  Tensor out = module_->forward(input);
  after_forward({out});
  return out;
}

std::vector<std::vector<size_t>> DistributedDataParallelImpl::bucket_indices() const {
  // The reducer numbers the parameters that require grad; map back to parameters().
  std::vector<size_t> index_of;
  auto all = module_->parameters();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].requires_grad()) index_of.push_back(i);
  std::vector<std::vector<size_t>> out;
  for (const auto& bucket : reducer_->buckets()) {
    out.emplace_back();
    for (size_t p : bucket) out.back().push_back(index_of[p]);
  }
  return out;
}

const DistributedDataParallelStats& DistributedDataParallelImpl::last_stats() const {
  return reducer_->stats();
}

}  // namespace ember::nn::parallel
