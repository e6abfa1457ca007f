// distributed/process_group_nccl.cpp: the nccl backend (CUDA tensors), as PyTorch's
// ProcessGroupNCCL. The group's communicator is made on its first collective, on the device of
// that collective's tensors (rank 0 makes the NCCL unique id and hands it over through the group's
// store); send/recv use a communicator of their own per pair of ranks, made on the first transfer
// between the two, as PyTorch's. Each communicator has its own stream: an operation waits for the
// caller's current stream, runs on the communicator's stream, and the tensors it uses are recorded
// on that stream for the caching allocator; non-contiguous tensors are staged through contiguous
// copies. Work::wait makes the caller's current stream wait for the operation (the host does not
// block), unless TORCH_NCCL_BLOCKING_WAIT=1 or EMBER_NCCL_BLOCKING_WAIT=1: then the host waits, up
// to the group's timeout, after which the communicator is aborted and a DistributedError names
// the collective, this rank and the timeout (barrier always waits on the host). NCCL failures
// become DistributedErrors with NCCL's own message.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "distributed/group_factory.h"
#include "ember/autograd.h"
#include "ember/creation.h"
#include "ember/cuda.h"

#if !defined(NCCL_VERSION_CODE) || NCCL_VERSION_CODE < NCCL_VERSION(2, 13, 0)
#error "ember's nccl backend needs NCCL 2.13 or newer (ncclAvg, ncclBfloat16, ncclGetLastError)"
#endif

namespace ember::distributed::detail {
namespace {

using ember::detail::str_cat;
using Clock = std::chrono::steady_clock;

std::string seconds(std::chrono::milliseconds t) {
  return str_cat(static_cast<double>(t.count()) / 1000.0, " s");
}

// TORCH_NCCL_BLOCKING_WAIT=1 (or EMBER_NCCL_BLOCKING_WAIT=1): Work::wait blocks the host.
bool blocking_wait() {
  static const bool on = [] {
    for (const char* name : {"EMBER_NCCL_BLOCKING_WAIT", "TORCH_NCCL_BLOCKING_WAIT"}) {
      const char* v = std::getenv(name);
      if (v && std::strcmp(v, "1") == 0) return true;
    }
    return false;
  }();
  return on;
}

const char* result_name(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "ncclResult_t";
  }
}

// NCCL's words for a failure: the code, its string and, when NCCL kept one, its last error
// message (NCCL_DEBUG=WARN or INFO prints more).
std::string nccl_message(ncclResult_t result, ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  return str_cat(result_name(result), " (", static_cast<int>(result),
                 "): ", ncclGetErrorString(result),
                 last && *last ? str_cat("; ", last) : std::string());
}

DistributedError failure(const std::string& what, ncclResult_t result, ncclComm_t comm,
                         std::chrono::milliseconds timeout) {
  return DistributedError(str_cat(what, " failed (nccl): ", nccl_message(result, comm),
                                  "; a peer rank may have exited, crashed or stalled (timeout ",
                                  seconds(timeout),
                                  "), or the ranks called different collectives"));
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::Bool:  // one byte holding 0 or 1, as PyTorch sends it
    case DType::UInt8:
      return ncclUint8;
    case DType::Int32:
      return ncclInt32;
    case DType::Int64:
      return ncclInt64;
    case DType::Float16:
      return ncclFloat16;
    case DType::BFloat16:
      return ncclBfloat16;
    case DType::Float32:
      return ncclFloat32;
    case DType::Float64:
      return ncclFloat64;
  }
  EMBER_THROW(DType, "[nccl] no NCCL data type for dtype ", static_cast<int>(dtype));
}

// ReduceOp as NCCL's, checked: AVG on floating dtypes only, no bitwise ops; on bool (bytes of 0 or
// 1) SUM is MAX (logical or) and PRODUCT is MIN (logical and), as PyTorch maps them.
ncclRedOp_t checked_op(const char* op_name, DType dtype, ReduceOp op) {
  EMBER_CHECK(op != ReduceOp::BAND && op != ReduceOp::BOR && op != ReduceOp::BXOR, "[", op_name,
              "] ReduceOp::", reduce_op_name(op),
              " is not supported by the nccl backend (NCCL has no bitwise reductions); use the "
              "gloo backend for bitwise reductions (on CPU tensors)");
  EMBER_CHECK(op != ReduceOp::AVG || is_floating_point(dtype), "[", op_name,
              "] ReduceOp::AVG needs a floating dtype, got ", dtype_name(dtype),
              "; use SUM and divide");
  bool is_bool = dtype == kBool;
  switch (op) {
    case ReduceOp::SUM:
      return is_bool ? ncclMax : ncclSum;
    case ReduceOp::PRODUCT:
      return is_bool ? ncclMin : ncclProd;
    case ReduceOp::MIN:
      return ncclMin;
    case ReduceOp::MAX:
      return ncclMax;
    case ReduceOp::AVG:
      return ncclAvg;
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR:
      break;
  }
  EMBER_THROW(Value, "[", op_name, "] unknown ReduceOp ", static_cast<int>(op));
}

// ncclGroupStart, the calls, ncclGroupEnd (always, as NCCL requires once started): the first
// failure.
ncclResult_t grouped(const std::function<ncclResult_t()>& calls) {
  ncclResult_t result = ncclGroupStart();
  if (result != ncclSuccess) return result;
  ncclResult_t first = calls();
  ncclResult_t end = ncclGroupEnd();
  return first != ncclSuccess ? first : end;
}

void* device_data(const Tensor& t) {
  return t.impl().data();
}
size_t count(const Tensor& t) {
  return static_cast<size_t>(t.numel());
}

// One NCCL communicator and the stream its operations run on. The group and the Works it returned
// share it, so that a Work can abort it; destroy() (by the group's destructor) and abort() free
// the NCCL communicator, after which the object only answers that it is gone.
class Communicator {
 public:
  Communicator(ncclComm_t comm, int device, cuda::Stream stream)
      : comm_(comm), device_(device), stream_(stream) {}
  ~Communicator() { destroy(); }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int device() const { return device_; }
  const cuda::Stream& stream() const { return stream_; }
  cudaStream_t stream_handle() const { return static_cast<cudaStream_t>(stream_.handle()); }
  // The communicator for the next operation (the caller holds the group's lock).
  ncclComm_t get(const std::string& what) {
    std::lock_guard lock(mutex_);
    if (!comm_)
      throw DistributedError(
          str_cat(what, " (nccl): the group's NCCL communicator ",
                  aborted_ ? "was aborted after an earlier failure or timeout" : "was destroyed",
                  "; make a new process group"));
    return comm_;
  }

  // Throws (after aborting the communicator) when NCCL reported an asynchronous error.
  void check_async_error(const std::string& what, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!comm_) {
      if (aborted_)
        throw DistributedError(str_cat(what,
                                       " (nccl): the group's NCCL communicator was aborted "
                                       "after an earlier failure or timeout"));
      return;  // destroyed: every operation issued before was completed then
    }
    ncclResult_t error = ncclSuccess;
    ncclResult_t result = ncclCommGetAsyncError(comm_, &error);
    if (result != ncclSuccess) error = result;
    if (error == ncclSuccess || error == ncclInProgress) return;
    DistributedError e = failure(what, error, comm_, timeout);
    abort_locked();
    throw e;
  }

  void abort() {
    std::lock_guard lock(mutex_);
    abort_locked();
  }

  // ncclCommDestroy (ncclCommAbort when NCCL reported an error, as destroying then may hang); never
  // throws.
  void destroy() noexcept {
    std::lock_guard lock(mutex_);
    if (!comm_) return;
    ncclResult_t error = ncclSuccess;
    if (ncclCommGetAsyncError(comm_, &error) != ncclSuccess || error != ncclSuccess) {
      abort_locked();
      return;
    }
    ncclCommDestroy(comm_);
    comm_ = nullptr;
  }

 private:
  void abort_locked() noexcept {
    if (!comm_) return;
    ncclCommAbort(comm_);
    comm_ = nullptr;
    aborted_ = true;
  }

  std::mutex mutex_;
  ncclComm_t comm_;
  int device_;
  cuda::Stream stream_;
  std::atomic<bool> aborted_{false};
};

class NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<Communicator> comm, cuda::Event end, std::string what,
           std::chrono::milliseconds timeout, bool host_wait)
      : comm_(std::move(comm)),
        end_(std::move(end)),
        what_(std::move(what)),
        timeout_(timeout),
        host_wait_(host_wait),
        start_(Clock::now()) {}

  bool is_completed() override { return end_.query(); }

  void wait() override {
    if (host_wait_ || blocking_wait()) {
      while (!end_.query()) {
        comm_->check_async_error(what_, timeout_);
        if (Clock::now() - start_ > timeout_) {
          comm_->abort();
          throw DistributedError(str_cat(
              what_, " timed out after ", seconds(timeout_), " (nccl, timeout ", seconds(timeout_),
              "): a peer rank may have exited, crashed or stalled, or the ranks called different "
              "collectives; the group's NCCL communicator was aborted"));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    comm_->check_async_error(what_, timeout_);
    // Work queued on the caller's stream from now on runs after the operation.
    end_.wait(cuda::Stream::current(comm_->device()));
  }

 private:
  std::shared_ptr<Communicator> comm_;
  cuda::Event end_;
  std::string what_;
  std::chrono::milliseconds timeout_;
  bool host_wait_;
  Clock::time_point start_;
};

// The buffers of one operation, dense as NCCL needs them. A non-contiguous tensor the operation
// reads is copied to a contiguous buffer on the caller's stream (before the communicator's stream
// waits for it); one it writes gets a contiguous buffer that is copied back on the communicator's
// stream after the operation. Every tensor the communicator's stream touches is in uses().
class Staging {
 public:
  // t is read by the operation.
  void* input(const Tensor& t) {
    Tensor buffer = t.is_contiguous() ? t : t.contiguous();
    uses_.push_back(buffer);
    return device_data(buffer);
  }
  // t is written by the operation (and read first when `read`).
  void* output(const Tensor& t, bool read) {
    uses_.push_back(t);
    if (t.is_contiguous()) return device_data(t);
    Tensor buffer =
        read ? t.contiguous() : empty(t.sizes(), {.dtype = t.dtype(), .device = t.device()});
    uses_.push_back(buffer);
    copy_back_.emplace_back(t, buffer);
    return device_data(buffer);
  }
  const std::vector<Tensor>& uses() const { return uses_; }
  const std::vector<std::pair<Tensor, Tensor>>& copy_back() const { return copy_back_; }

 private:
  std::vector<Tensor> uses_;
  std::vector<std::pair<Tensor, Tensor>> copy_back_;  // (tensor, its contiguous buffer)
};

using Enqueue = std::function<ncclResult_t(ncclComm_t, cudaStream_t)>;

class NcclGroup final : public ProcessGroup {
 public:
  explicit NcclGroup(const GroupSpec& spec)
      : ProcessGroup(spec.rank, spec.size, spec.global_ranks, spec.timeout), store_(spec.store) {}

  // The group's communicator first, then the pairs' in increasing order of the peer: the same
  // order (pairs by (lower rank, higher rank)) on every rank.
  ~NcclGroup() override {
    if (comm_) comm_->destroy();
    for (auto& [peer, comm] : pairs_) comm->destroy();
  }

  std::string backend_name() const override { return "nccl"; }

  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) override {
    const char* name = "all_reduce";
    ncclRedOp_t nccl_op = checked_op(name, tensor.dtype(), op);
    std::lock_guard lock(mutex_);
    int device = check_device(name, {tensor});
    if (tensor.numel() == 0) return std::make_shared<CompletedWork>();
    auto comm = communicator(name, device);
    NoGradGuard no_grad;
    Staging staging;
    void* data = staging.output(tensor, true);
    size_t n = count(tensor);
    ncclDataType_t type = nccl_type(tensor.dtype());
    return run(what(name), comm, staging, [&](ncclComm_t c, cudaStream_t s) {
      return ncclAllReduce(data, data, n, type, nccl_op, c, s);
    });
  }

  std::shared_ptr<Work> broadcast(const Tensor& tensor, int src) override {
    const char* name = "broadcast";
    std::lock_guard lock(mutex_);
    int device = check_device(name, {tensor});
    if (tensor.numel() == 0) return std::make_shared<CompletedWork>();
    auto comm = communicator(name, device);
    NoGradGuard no_grad;
    Staging staging;
    void* data = rank() == src ? staging.input(tensor) : staging.output(tensor, false);
    size_t n = count(tensor);
    ncclDataType_t type = nccl_type(tensor.dtype());
    return run(what(name), comm, staging, [&](ncclComm_t c, cudaStream_t s) {
      return ncclBroadcast(data, data, n, type, src, c, s);
    });
  }

  std::shared_ptr<Work> all_gather_into_tensor(const Tensor& output, const Tensor& input) override {
    const char* name = "all_gather_into_tensor";
    std::lock_guard lock(mutex_);
    int device = check_device(name, {input, output});
    if (input.numel() == 0) return std::make_shared<CompletedWork>();
    auto comm = communicator(name, device);
    NoGradGuard no_grad;
    Staging staging;
    void* in = staging.input(input);
    void* out = staging.output(output, false);
    size_t n = count(input);
    ncclDataType_t type = nccl_type(input.dtype());
    return run(what(name), comm, staging,
               [&](ncclComm_t c, cudaStream_t s) { return ncclAllGather(in, out, n, type, c, s); });
  }

  std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& output, const Tensor& input,
                                              ReduceOp op) override {
    const char* name = "reduce_scatter_tensor";
    ncclRedOp_t nccl_op = checked_op(name, input.dtype(), op);
    std::lock_guard lock(mutex_);
    int device = check_device(name, {input, output});
    if (output.numel() == 0) return std::make_shared<CompletedWork>();
    auto comm = communicator(name, device);
    NoGradGuard no_grad;
    Staging staging;
    void* in = staging.input(input);
    void* out = staging.output(output, false);
    size_t n = count(output);
    ncclDataType_t type = nccl_type(input.dtype());
    return run(what(name), comm, staging, [&](ncclComm_t c, cudaStream_t s) {
      return ncclReduceScatter(in, out, n, type, nccl_op, c, s);
    });
  }

  // In place on dst; the other ranks only send (NCCL reads their buffer and, given no receive
  // buffer, writes nothing there), so their tensors are left as they were.
  std::shared_ptr<Work> reduce(const Tensor& tensor, int dst, ReduceOp op) override {
    const char* name = "reduce";
    ncclRedOp_t nccl_op = checked_op(name, tensor.dtype(), op);
    std::lock_guard lock(mutex_);
    int device = check_device(name, {tensor});
    if (tensor.numel() == 0) return std::make_shared<CompletedWork>();
    auto comm = communicator(name, device);
    NoGradGuard no_grad;
    Staging staging;
    bool root = rank() == dst;
    void* send = root ? staging.output(tensor, true) : staging.input(tensor);
    void* recv = root ? send : nullptr;
    size_t n = count(tensor);
    ncclDataType_t type = nccl_type(tensor.dtype());
    return run(what(name), comm, staging, [&](ncclComm_t c, cudaStream_t s) {
      return ncclReduce(send, recv, n, type, nccl_op, dst, c, s);
    });
  }

  // Every rank sends its input to dst (dst to itself too); dst receives one from each rank.
  std::shared_ptr<Work> gather(const std::vector<Tensor>& gather_list, const Tensor& input,
                               int dst) override {
    const char* name = "gather";
    bool root = rank() == dst;
    std::lock_guard lock(mutex_);
    std::vector<Tensor> all{input};
    if (root) all.insert(all.end(), gather_list.begin(), gather_list.end());
    int device = check_device(name, all);
    if (input.numel() == 0) return std::make_shared<CompletedWork>();
    auto comm = communicator(name, device);
    NoGradGuard no_grad;
    Staging staging;
    void* in = staging.input(input);
    std::vector<void*> outs;
    if (root)
      for (const Tensor& t : gather_list) outs.push_back(staging.output(t, false));
    size_t n = count(input);
    ncclDataType_t type = nccl_type(input.dtype());
    return run(what(name), comm, staging, [&](ncclComm_t c, cudaStream_t s) {
      return grouped([&] {
        for (size_t r = 0; r < outs.size(); ++r) {
          ncclResult_t result = ncclRecv(outs[r], n, type, static_cast<int>(r), c, s);
          if (result != ncclSuccess) return result;
        }
        return ncclSend(in, n, type, dst, c, s);
      });
    });
  }

  // src sends scatter_list[r] to each rank r (itself too); every rank receives one.
  std::shared_ptr<Work> scatter(const Tensor& output, const std::vector<Tensor>& scatter_list,
                                int src) override {
    const char* name = "scatter";
    bool root = rank() == src;
    std::lock_guard lock(mutex_);
    std::vector<Tensor> all{output};
    if (root) all.insert(all.end(), scatter_list.begin(), scatter_list.end());
    int device = check_device(name, all);
    if (output.numel() == 0) return std::make_shared<CompletedWork>();
    auto comm = communicator(name, device);
    NoGradGuard no_grad;
    Staging staging;
    std::vector<void*> ins;
    if (root)
      for (const Tensor& t : scatter_list) ins.push_back(staging.input(t));
    void* out = staging.output(output, false);
    size_t n = count(output);
    ncclDataType_t type = nccl_type(output.dtype());
    return run(what(name), comm, staging, [&](ncclComm_t c, cudaStream_t s) {
      return grouped([&] {
        for (size_t r = 0; r < ins.size(); ++r) {
          ncclResult_t result = ncclSend(ins[r], n, type, static_cast<int>(r), c, s);
          if (result != ncclSuccess) return result;
        }
        return ncclRecv(out, n, type, src, c, s);
      });
    });
  }

  // An all-reduce of one element on the communicator's device (the current device when the group
  // has none yet); its Work waits on the host, as PyTorch's barrier.
  std::shared_ptr<Work> barrier() override {
    const char* name = "barrier";
    std::lock_guard lock(mutex_);
    int device = device_ >= 0 ? device_ : cuda::current_device();
    auto comm = communicator(name, device);
    NoGradGuard no_grad;
    Tensor one = zeros({1}, {.dtype = kFloat32, .device = Device(kCUDA, device)});
    Staging staging;
    void* data = staging.output(one, true);
    return run(
        what(name), comm, staging,
        [&](ncclComm_t c, cudaStream_t s) {
          return ncclAllReduce(data, data, 1, ncclFloat32, ncclSum, c, s);
        },
        true);
  }

  // NCCL has no tags: transfers between two ranks match in the order they were called.
  std::shared_ptr<Work> send(const Tensor& tensor, int dst, int /*tag*/) override {
    std::lock_guard lock(mutex_);
    int device = check_device("send", {tensor});
    if (tensor.numel() == 0) return std::make_shared<CompletedWork>();
    std::string w = str_cat("[send] rank ", rank(), " of ", size(), " to rank ", dst);
    auto comm = pair_communicator(w, device, dst);
    NoGradGuard no_grad;
    Staging staging;
    void* data = staging.input(tensor);
    int peer = rank() < dst ? 1 : 0;  // dst's rank in the pair's communicator
    size_t n = count(tensor);
    ncclDataType_t type = nccl_type(tensor.dtype());
    return run(w, comm, staging,
               [&](ncclComm_t c, cudaStream_t s) { return ncclSend(data, n, type, peer, c, s); });
  }

  std::shared_ptr<Work> recv(const Tensor& tensor, int src, int /*tag*/) override {
    std::lock_guard lock(mutex_);
    int device = check_device("recv", {tensor});
    if (tensor.numel() == 0) return std::make_shared<CompletedWork>();
    std::string w = str_cat("[recv] rank ", rank(), " of ", size(), " from rank ", src);
    auto comm = pair_communicator(w, device, src);
    NoGradGuard no_grad;
    Staging staging;
    void* data = staging.output(tensor, false);
    int peer = rank() < src ? 1 : 0;
    size_t n = count(tensor);
    ncclDataType_t type = nccl_type(tensor.dtype());
    return run(w, comm, staging,
               [&](ncclComm_t c, cudaStream_t s) { return ncclRecv(data, n, type, peer, c, s); });
  }

 private:
  std::string what(const char* name) const {
    return str_cat("[", name, "] rank ", rank(), " of ", size());
  }

  // The CUDA device of the operation's tensors (all on one), checked against the group's.
  int check_device(const char* name, const std::vector<Tensor>& tensors) {
    int device = -1;
    for (const Tensor& t : tensors) {
      Device d = t.device();
      EMBER_CHECK_KIND(Device, d.is_cuda(), "[", name, "] got a tensor on ", d.str(),
                       ": nccl takes CUDA tensors; use the gloo backend (or backend \"auto\") for "
                       "CPU tensors");
      int index = d.index() >= 0 ? d.index() : cuda::current_device();
      if (device < 0) device = index;
      EMBER_CHECK_KIND(Device, index == device, "[", name, "] got tensors on cuda:", device,
                       " and cuda:", index, "; one operation takes tensors of one device");
    }
    EMBER_CHECK_KIND(Device, device_ < 0 || device == device_, "[", name, "] rank ", rank(), " of ",
                     size(), ": the tensor is on cuda:", device,
                     " but this group's NCCL communicator is on cuda:", device_,
                     " (the device of its first collective); a process uses one GPU per group: "
                     "call cuda::set_device(local rank) first and keep the group's tensors there");
    return device;
  }

  void check_usable(const std::string& w) {
    if (!broken_.empty())
      throw DistributedError(str_cat(w,
                                     " (nccl): this group cannot run collectives since its "
                                     "NCCL communicator failed to initialize: ",
                                     broken_));
  }

  std::shared_ptr<Communicator> communicator(const char* name, int device) {
    std::string w = what(name);
    check_usable(w);
    if (!comm_) {
      std::vector<int> members;
      for (int r = 0; r < size(); ++r) members.push_back(r);
      comm_ = make_communicator(w, device, "comm/", members, "collective");
      device_ = device;
    }
    return comm_;
  }

  // send/recv's communicator of this rank and `peer` (rank 0 in it: the lower group rank).
  std::shared_ptr<Communicator> pair_communicator(const std::string& w, int device, int peer) {
    check_usable(w);
    auto it = pairs_.find(peer);
    if (it != pairs_.end()) return it->second;
    int lo = std::min(rank(), peer), hi = std::max(rank(), peer);
    auto comm = make_communicator(w, device, str_cat("p2p/", lo, ":", hi, "/"), {lo, hi},
                                  "send/recv between the two");
    device_ = device;
    pairs_.emplace(peer, comm);
    return comm;
  }

  // The rendezvous through the group's store and ncclCommInitRank of the communicator of
  // `members` (group ranks; this rank is one of them) under `key`: the first member makes the
  // unique id, every member checks in and waits (up to the timeout) for the others, so that a
  // missing rank is named instead of ncclCommInitRank waiting for it forever.
  std::shared_ptr<Communicator> make_communicator(const std::string& w, int device,
                                                  const std::string& key,
                                                  const std::vector<int>& members,
                                                  const char* first_use) {
    int nranks = static_cast<int>(members.size());
    int me = static_cast<int>(std::find(members.begin(), members.end(), rank()) - members.begin());
    try {
      if (me == 0) {
        ncclUniqueId id;
        ncclResult_t result = ncclGetUniqueId(&id);
        if (result != ncclSuccess)
          throw DistributedError(
              str_cat(w, ": ncclGetUniqueId failed: ", nccl_message(result, nullptr)));
        const auto* bytes = reinterpret_cast<const uint8_t*>(&id);
        store_->set(key + "unique_id", std::vector<uint8_t>(bytes, bytes + sizeof id));
      }
      store_->set(key + "arrived/" + std::to_string(me), {1});
      std::vector<std::string> keys;
      for (int m = 0; m < nranks; ++m) keys.push_back(key + "arrived/" + std::to_string(m));
      try {
        store_->wait(keys, timeout());
      } catch (const DistributedError&) {
        std::string missing;
        for (size_t m = 0; m < keys.size(); ++m)
          if (!store_->check({keys[m]}))
            missing += (missing.empty() ? "" : ", ") + std::to_string(members[m]);
        throw DistributedError(str_cat(
            w, ": timed out after ", seconds(timeout()), " (nccl, timeout ", seconds(timeout()),
            ") waiting for rank(s) ", missing.empty() ? std::string("?") : missing,
            " to make the NCCL communicator (on their first ", first_use,
            "); every rank must call the same collectives in the same order"));
      }
      ncclUniqueId id;
      std::vector<uint8_t> bytes = store_->get(key + "unique_id");
      EMBER_CHECK(bytes.size() == sizeof id, w, ": the NCCL unique id in the store has ",
                  bytes.size(), " bytes, not ", sizeof id);
      std::memcpy(&id, bytes.data(), sizeof id);

      cuda::DeviceGuard guard(device);
      cuda::Stream stream = cuda::Stream::create(device);
      ncclComm_t comm = nullptr;
      ncclResult_t result = ncclCommInitRank(&comm, nranks, id, me);
      if (result != ncclSuccess) {
        std::string message = nccl_message(result, comm);
        if (comm) ncclCommAbort(comm);
        throw DistributedError(str_cat(w, ": ncclCommInitRank (", nranks, " ranks, cuda:", device,
                                       ") failed: ", message));
      }
      return std::make_shared<Communicator>(comm, device, stream);
    } catch (const Error& e) {
      broken_ = e.what();
      throw;
    }
  }

  // Queues one operation on the communicator's stream after the work queued so far on the
  // caller's current stream; its tensors are recorded on that stream, staged outputs are copied
  // back there, and the returned Work waits for the event recorded after them.
  std::shared_ptr<Work> run(const std::string& w, const std::shared_ptr<Communicator>& comm,
                            const Staging& staging, const Enqueue& enqueue,
                            bool host_wait = false) {
    ncclComm_t c = comm->get(w);
    const cuda::Stream& stream = comm->stream();
    cuda::DeviceGuard guard(comm->device());
    stream.wait_stream(cuda::Stream::current(comm->device()));
    for (const Tensor& t : staging.uses()) t.record_stream(stream);
    ncclResult_t result = enqueue(c, comm->stream_handle());
    if (result != ncclSuccess) throw failure(w, result, c, timeout());
    if (!staging.copy_back().empty()) {
      cuda::StreamGuard on_stream(stream);
      for (const auto& [tensor, buffer] : staging.copy_back()) {
        Tensor out = tensor;
        out.copy_(buffer);
      }
    }
    cuda::Event end;
    end.record(stream);
    return std::make_shared<NcclWork>(comm, std::move(end), w, timeout(), host_wait);
  }

  std::shared_ptr<Store> store_;
  std::mutex mutex_;
  std::shared_ptr<Communicator> comm_;                  // the group's, made lazily
  std::map<int, std::shared_ptr<Communicator>> pairs_;  // send/recv's, by peer rank
  int device_ = -1;                                     // the GPU of the group's communicators
  std::string broken_;  // why a communicator failed to initialize (the group is unusable)
};

}  // namespace

std::shared_ptr<ProcessGroup> make_nccl_group(const GroupSpec& spec) {
  return std::make_shared<NcclGroup>(spec);
}

}  // namespace ember::distributed::detail
