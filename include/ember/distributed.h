// ember/distributed.h: process groups and collectives across processes, in the shape of
// torch.distributed -- init_process_group (env://, tcp://, file://), the default group and
// new_group, and all_reduce / broadcast / all_gather / reduce_scatter / reduce / gather / scatter /
// barrier / send / recv on CPU tensors through Gloo and on CUDA tensors through NCCL.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember::distributed {

// torch.distributed.ReduceOp. AVG is a sum divided by the group size (floating dtypes only);
// BAND/BOR/BXOR are for integer and bool tensors.
enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR };
const char* reduce_op_name(ReduceOp op);

// The handle of a collective started with async_op: wait() blocks until it is done on this rank
// (for NCCL: until the current stream is ordered after it) and throws the collective's
// ember::Error, if any. Tensors passed to it must stay unchanged until then.
class Work {
 public:
  virtual ~Work() = default;
  virtual bool is_completed() = 0;
  // Throws what the collective failed with (a peer that exited or stalled past the timeout, ...).
  virtual void wait() = 0;
  // How long the collective itself ran once started, in seconds (for a completed Work of a
  // backend that measures it, as Gloo's; 0 otherwise).
  virtual double run_seconds() const { return 0; }
};

// Thrown when a collective or the rendezvous fails because a peer is gone or too slow: the
// message names the collective, this rank and the timeout. Its kind is ErrorKind::IO.
class DistributedError : public Error {
 public:
  explicit DistributedError(const std::string& message) : Error(ErrorKind::IO, message) {}
};

// A group of processes (c10d's ProcessGroup) and its backend. Every rank of the group must call
// the same collectives in the same order with tensors of the same shapes and dtypes. Tensors
// written in place ("out") are handles: the storage they share is written.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }  // this process's rank in the group
  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  virtual std::string backend_name() const = 0;  // "gloo" or "nccl"
  // The global ranks of the group's members, by group rank.
  const std::vector<int>& global_ranks() const { return global_ranks_; }

  // tensor (any shape): in place, the reduction over the group of every rank's tensor.
  virtual std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) = 0;
  // tensor: in place, src's tensor on every rank.
  virtual std::shared_ptr<Work> broadcast(const Tensor& tensor, int src) = 0;
  // output (size * input.numel elements, e.g. [size * N, ...] or [size, N, ...]): every rank's
  // input, concatenated by rank.
  virtual std::shared_ptr<Work> all_gather_into_tensor(const Tensor& output,
                                                       const Tensor& input) = 0;
  // output (input.numel / size elements): this rank's chunk of the reduction of every rank's
  // input (input [size * N, ...]).
  virtual std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& output, const Tensor& input,
                                                      ReduceOp op) = 0;
  // tensor: in place on dst, the reduction; other ranks' tensors are left as they were.
  virtual std::shared_ptr<Work> reduce(const Tensor& tensor, int dst, ReduceOp op) = 0;
  // On dst, gather_list[r] (size tensors shaped as input) gets rank r's input; elsewhere
  // gather_list is ignored (may be empty).
  virtual std::shared_ptr<Work> gather(const std::vector<Tensor>& gather_list, const Tensor& input,
                                       int dst) = 0;
  // output gets src's scatter_list[rank]; scatter_list is read on src only.
  virtual std::shared_ptr<Work> scatter(const Tensor& output,
                                        const std::vector<Tensor>& scatter_list, int src) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;
  // Point to point: dst receives with recv(src = this rank, same tag) into a tensor of the same
  // shape and dtype.
  virtual std::shared_ptr<Work> send(const Tensor& tensor, int dst, int tag) = 0;
  virtual std::shared_ptr<Work> recv(const Tensor& tensor, int src, int tag) = 0;

 protected:
  ProcessGroup(int rank, int size, std::vector<int> global_ranks, std::chrono::milliseconds timeout)
      : rank_(rank), size_(size), timeout_(timeout), global_ranks_(std::move(global_ranks)) {}

 private:
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::vector<int> global_ranks_;
};

// The options of init_process_group. backend "auto" picks NCCL when CUDA is available and NCCL is
// built, else Gloo. init_method: "env://" reads MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE (as
// torchrun and `ember run` set them), "tcp://HOST:PORT" or "file:///path/to/file" (a file on a
// file system every rank sees; it should not exist before the first run). world_size and rank
// default (-1) to the environment's WORLD_SIZE and RANK.
struct InitOptions {
  std::string backend = "auto";
  std::string init_method = "env://";
  int world_size = -1;
  int rank = -1;
  // How long a collective, the rendezvous or a store request waits for its peers before failing
  // with a DistributedError (PyTorch's default: 30 minutes; EMBER_DISTRIBUTED_TIMEOUT_S overrides
  // the default in seconds).
  std::optional<std::chrono::milliseconds> timeout = std::nullopt;
};

bool is_available();  // true: ember was built with at least one backend
bool is_gloo_available();
bool is_nccl_available();

void init_process_group(const InitOptions& options = {});
bool is_initialized();
// Ends the default group and every group made by new_group (all ranks should call it).
void destroy_process_group();

// The default group (init_process_group's); throws if not initialized.
std::shared_ptr<ProcessGroup> default_group();
int get_rank(const ProcessGroup* group = nullptr);  // -1 when this rank is not in `group`
int get_world_size(const ProcessGroup* group = nullptr);
std::string get_backend(const ProcessGroup* group = nullptr);
// A group of some of the default group's ranks (sorted, unique); every rank of the default group
// must call it, in the same order. Returns nullptr on ranks not in `ranks`.
std::shared_ptr<ProcessGroup> new_group(std::vector<int> ranks, const std::string& backend = "");

// The collectives on a group (the default group when nullptr), as torch.distributed's functions:
// with async_op the returned Work runs on; without, they return when done (a completed Work).
std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::SUM,
                                 ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> broadcast(const Tensor& tensor, int src, ProcessGroup* group = nullptr,
                                bool async_op = false);
// tensor_list: size tensors shaped as tensor, filled with every rank's tensor.
std::shared_ptr<Work> all_gather(const std::vector<Tensor>& tensor_list, const Tensor& tensor,
                                 ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> all_gather_into_tensor(const Tensor& output, const Tensor& input,
                                             ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& output, const Tensor& input,
                                            ReduceOp op = ReduceOp::SUM,
                                            ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> reduce(const Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM,
                             ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> gather(const Tensor& tensor, const std::vector<Tensor>& gather_list,
                             int dst = 0, ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> scatter(const Tensor& tensor, const std::vector<Tensor>& scatter_list,
                              int src = 0, ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> barrier(ProcessGroup* group = nullptr, bool async_op = false);
// dst and src are ranks of the group.
void send(const Tensor& tensor, int dst, ProcessGroup* group = nullptr, int tag = 0);
void recv(const Tensor& tensor, int src, ProcessGroup* group = nullptr, int tag = 0);
std::shared_ptr<Work> isend(const Tensor& tensor, int dst, ProcessGroup* group = nullptr,
                            int tag = 0);
std::shared_ptr<Work> irecv(const Tensor& tensor, int src, ProcessGroup* group = nullptr,
                            int tag = 0);

// The cross-rank check of every collective's op, dtype and shape (EMBER_DISTRIBUTED_DEBUG=DETAIL
// or TORCH_DISTRIBUTED_DEBUG=DETAIL turn it on at start); set true to turn it on in code.
bool& debug_detail_override();

}  // namespace ember::distributed
