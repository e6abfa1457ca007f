// nn/data_parallel.cpp: DataParallel -- the batch split over devices, replicas refreshed from the
// module, forwards on parallel threads (carrying grad mode and autocast over), outputs gathered,
// and the replicas' gradients added into the module's at the end of backward.
#include <exception>
#include <thread>

#include "ember/autocast.h"
#include "ember/cuda.h"
#include "ember/nn/parallel.h"
#include "ember/ops.h"

namespace ember::nn::parallel {

namespace {

std::vector<Device> default_devices() {
  std::vector<Device> out;
  for (int i = 0; i < cuda::device_count(); ++i) out.emplace_back(kCUDA, i);
  return out;
}

// What a forward thread must see as its caller does: grad mode and autocast are per thread.
struct ThreadState {
  bool grad_enabled = autograd::is_grad_enabled();
  bool autocast_cuda = is_autocast_enabled(kCUDA);
  DType autocast_cuda_dtype = get_autocast_dtype(kCUDA);
  bool autocast_cpu = is_autocast_enabled(kCPU);
  DType autocast_cpu_dtype = get_autocast_dtype(kCPU);
};

}  // namespace

DataParallelImpl::DataParallelImpl(std::shared_ptr<Module> module, DataParallelOptions options)
    : Module("DataParallel"),
      module_(std::move(module)),
      devices_(options.device_ids.empty() ? default_devices() : options.device_ids),
      output_device_(kCPU),
      dim_(options.dim) {
  EMBER_CHECK(module_ != nullptr, "[DataParallel] the module is null");
  register_module("module", module_);
  for (Device& d : devices_) {
    d = resolve_device(d);
    EMBER_CHECK_KIND(Device, d.is_cuda() || devices_.size() == 1,
                     "[DataParallel] device_ids "
                     "must be CUDA devices, got ",
                     d.str(), "; on the CPU call the module itself");
  }
  for (size_t i = 0; i < devices_.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      EMBER_CHECK_KIND(Device, !(devices_[i] == devices_[j]), "[DataParallel] device ",
                       devices_[i].str(), " is listed twice in device_ids");
  output_device_ = options.output_device ? resolve_device(*options.output_device)
                   : devices_.empty()    ? Device(kCPU)
                                         : devices_.front();
}

DataParallelImpl::~DataParallelImpl() {
  for (auto& h : hooks_) h.remove();
}

void DataParallelImpl::make_replicas() {
  if (replicas_.size() + 1 >= devices_.size()) return;
  for (size_t i = replicas_.size() + 1; i < devices_.size(); ++i) {
    std::shared_ptr<Module> replica = module_->clone();
    replica->to(devices_[i]);
    // Each replica parameter's gradient goes to the module's at the end of backward.
    for (const Tensor& p : replica->parameters()) {
      if (!p.requires_grad()) continue;
      hooks_.push_back(p.register_post_accumulate_grad_hook([this](const Tensor&) {
        if (callback_queued_) return;
        callback_queued_ = true;
        autograd::queue_callback([this] { add_replica_grads(); });
      }));
    }
    replicas_.push_back(std::move(replica));
  }
}

void DataParallelImpl::add_replica_grads() {
  callback_queued_ = false;
  NoGradGuard no_grad;
  std::vector<Tensor> mine = module_->parameters();
  for (const auto& replica : replicas_) {
    std::vector<Tensor> theirs = replica->parameters();
    for (size_t i = 0; i < mine.size() && i < theirs.size(); ++i) {
      Tensor& g = theirs[i].mutable_grad();
      if (!g.defined()) continue;
      Tensor here = g.to(mine[i].device());
      Tensor& total = mine[i].mutable_grad();
      if (total.defined()) {
        total.add_(here);
      } else {
        total = here.is_same(g) ? here.clone() : here;
      }
      g = Tensor();
    }
  }
}

Tensor DataParallelImpl::forward(const Tensor& input) {
  if (devices_.empty()) return module_->forward(input);
  for (const auto& [name, t] : module_->state_dict())
    EMBER_CHECK_KIND(Device, t.device() == devices_.front(),
                     "[DataParallel] module must have its "
                     "parameters and buffers on device ",
                     devices_.front().str(), " (device_ids[0]) but found '", name, "' on device ",
                     t.device().str(), "; move it with module->to(", devices_.front().str(), ")");
  if (devices_.size() == 1) return module_->forward(input.to(devices_.front()));
  EMBER_CHECK_KIND(Shape, input.dim() > 0,
                   "[DataParallel] the input must have a batch dim to "
                   "split; got a 0-dim tensor");
  const int64_t dim = dim_ < 0 ? dim_ + input.dim() : dim_;
  std::vector<Tensor> chunks = input.chunk(static_cast<int64_t>(devices_.size()), dim);
  const size_t n = chunks.size();
  make_replicas();
  // The module's current values and train/eval flags into the replicas that take part (modules()
  // lists parents before children, so each one's own flag wins).
  {
    NoGradGuard no_grad;
    StateDict source = module_->state_dict();
    std::vector<std::shared_ptr<Module>> flags = module_->modules();
    for (size_t r = 0; r + 1 < n; ++r) {
      StateDict target = replicas_[r]->state_dict();
      for (size_t i = 0; i < source.size(); ++i) target[i].second.copy_(source[i].second);
      std::vector<std::shared_ptr<Module>> theirs = replicas_[r]->modules();
      for (size_t i = 0; i < flags.size() && i < theirs.size(); ++i)
        theirs[i]->train(flags[i]->is_training());
    }
  }
  std::vector<Tensor> outputs(n);
  std::vector<std::exception_ptr> errors(n);
  const ThreadState state;
  auto run = [&](size_t i) {
    try {
      autograd::set_grad_enabled(state.grad_enabled);
      AutocastGuard cuda_autocast(kCUDA, state.autocast_cuda_dtype, state.autocast_cuda);
      AutocastGuard cpu_autocast(kCPU, state.autocast_cpu_dtype, state.autocast_cpu);
      Module& m = i == 0 ? *module_ : *replicas_[i - 1];
      outputs[i] = m.forward(chunks[i].to(devices_[i]));
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) threads.emplace_back(run, i);
  run(0);
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (Tensor& out : outputs) out = out.to(output_device_);
  return cat(outputs, dim);
}

}  // namespace ember::nn::parallel
