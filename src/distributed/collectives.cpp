// distributed/collectives.cpp: torch.distributed's free functions -- the group (default when
// none), the checks every backend shares (ranks in range, matching shapes and dtypes, clear
// errors), all_gather over all_gather_into_tensor, synchronous waits, and the cross-rank check of
// EMBER_DISTRIBUTED_DEBUG=DETAIL (or TORCH_DISTRIBUTED_DEBUG): before each collective the ranks
// exchange what they are calling (op, dtype, shape) and fail on a mismatch instead of hanging or
// mixing data.
#include <cstdlib>
#include <cstring>

#include "distributed/group_factory.h"
#include "ember/creation.h"

namespace ember::distributed {
namespace {

using ember::detail::str_cat;

std::shared_ptr<ProcessGroup> resolve(ProcessGroup* group, const char* op) {
  if (group) return std::shared_ptr<ProcessGroup>(std::shared_ptr<ProcessGroup>{}, group);
  EMBER_CHECK(is_initialized(), "[", op,
              "] the default process group is not initialized; call "
              "ember::distributed::init_process_group() first");
  return default_group();
}

void check_defined(const Tensor& t, const char* op, const char* name) {
  EMBER_CHECK(t.defined(), "[", op, "] ", name, " is an undefined tensor");
}

void check_rank(const ProcessGroup& g, int r, const char* op, const char* name) {
  EMBER_CHECK(r >= 0 && r < g.size(), "[", op, "] ", name, " ", r,
              " is out of range for a group of ", g.size(), " ranks");
}

void check_like(const Tensor& a, const Tensor& b, const char* op, const char* what) {
  EMBER_CHECK_KIND(DType, a.dtype() == b.dtype(), "[", op, "] ", what, " has dtype ",
                   dtype_name(a.dtype()), " but the input has ", dtype_name(b.dtype()));
  EMBER_CHECK_KIND(Shape, a.sizes() == b.sizes(), "[", op, "] ", what, " has shape ",
                   shape_str(a.sizes()), " but the input has ", shape_str(b.sizes()));
  EMBER_CHECK_KIND(Device, a.device() == b.device(), "[", op, "] ", what, " is on ",
                   a.device().str(), " but the input is on ", b.device().str());
}

bool debug_detail() {
  static const bool on = [] {
    for (const char* name : {"EMBER_DISTRIBUTED_DEBUG", "TORCH_DISTRIBUTED_DEBUG"}) {
      const char* v = std::getenv(name);
      if (v && std::strcmp(v, "DETAIL") == 0) return true;
    }
    return false;
  }();
  return debug_detail_override() || on;
}

constexpr int kMaxDims = 8;
constexpr int kFields = 4 + kMaxDims;

enum Op : int64_t {
  kAllReduce = 1,
  kBroadcast,
  kAllGather,
  kReduceScatter,
  kReduce,
  kGather,
  kScatter,
  kBarrier
};
const char* op_name(int64_t op) {
  static const char* names[] = {
      "?",      "all_reduce", "broadcast", "all_gather", "reduce_scatter_tensor",
      "reduce", "gather",     "scatter",   "barrier"};
  return op >= 0 && op <= kBarrier ? names[op] : "?";
}
std::string describe(const int64_t* f) {
  if (f[0] == kBarrier) return "barrier";
  std::string shape = "[";
  for (int64_t d = 0; d < std::min<int64_t>(f[2], kMaxDims); ++d)
    shape += (d ? ", " : "") + std::to_string(f[4 + d]);
  shape += "]";
  return str_cat(op_name(f[0]), " on ", dtype_name(static_cast<DType>(f[1])), " ", shape,
                 f[3] != 0
                     ? str_cat(" (ReduceOp ", reduce_op_name(static_cast<ReduceOp>(f[3] - 1)), ")")
                     : std::string());
}

// DETAIL mode: every rank's (op, dtype, shape, reduce op) must be the same.
void check_same_call(ProcessGroup& g, Op op, const Tensor* t, int64_t reduce = 0) {
  if (!debug_detail() || g.size() == 1) return;
  std::vector<int64_t> f(kFields, 0);
  f[0] = op;
  f[3] = reduce;
  Device device("cpu");
  if (t) {
    f[1] = static_cast<int64_t>(t->dtype());
    f[2] = t->dim();
    for (int64_t d = 0; d < std::min<int64_t>(t->dim(), kMaxDims); ++d)
      f[static_cast<size_t>(4 + d)] = t->sizes()[static_cast<size_t>(d)];
    device = t->device();
  }
  Tensor mine = from_vector(f, Shape{kFields}).to(device);
  Tensor all = empty(Shape{g.size() * kFields}, {.dtype = kInt64, .device = device});
  g.all_gather_into_tensor(all, mine)->wait();
  std::vector<int64_t> every = all.to(Device("cpu")).to_vector<int64_t>();
  for (int r = 0; r < g.size(); ++r) {
    const int64_t* theirs = every.data() + static_cast<size_t>(r) * kFields;
    if (std::memcmp(theirs, f.data(), sizeof(int64_t) * kFields) != 0)
      throw DistributedError(str_cat("[", op_name(op), "] rank ", g.rank(), " called ",
                                     describe(f.data()), " but rank ", r, " called ",
                                     describe(theirs),
                                     "; every rank must call the same collectives in the same "
                                     "order with the same shapes and dtypes (DETAIL check)"));
  }
}

std::shared_ptr<Work> finish(std::shared_ptr<Work> work, bool async_op) {
  if (async_op) return work;
  work->wait();
  return std::make_shared<detail::CompletedWork>();
}

// all_gather's list: one all_gather_into_tensor, then the rows copied out when it is done.
class CopyOutWork final : public Work {
 public:
  CopyOutWork(std::shared_ptr<Work> inner, Tensor flat, std::vector<Tensor> outs)
      : inner_(std::move(inner)), flat_(std::move(flat)), outs_(std::move(outs)) {}
  bool is_completed() override { return copied_ || inner_->is_completed(); }
  void wait() override {
    if (copied_) return;
    inner_->wait();
    for (size_t r = 0; r < outs_.size(); ++r) outs_[r].copy_(flat_[static_cast<int64_t>(r)]);
    copied_ = true;
  }

 private:
  std::shared_ptr<Work> inner_;
  Tensor flat_;
  std::vector<Tensor> outs_;
  bool copied_ = false;
};

}  // namespace

bool& debug_detail_override() {
  static bool value = false;
  return value;
}

std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op, ProcessGroup* group,
                                 bool async_op) {
  auto g = resolve(group, "all_reduce");
  check_defined(tensor, "all_reduce", "tensor");
  check_same_call(*g, kAllReduce, &tensor, static_cast<int64_t>(op) + 1);
  return finish(g->all_reduce(tensor, op), async_op);
}

std::shared_ptr<Work> broadcast(const Tensor& tensor, int src, ProcessGroup* group, bool async_op) {
  auto g = resolve(group, "broadcast");
  check_defined(tensor, "broadcast", "tensor");
  check_rank(*g, src, "broadcast", "src");
  check_same_call(*g, kBroadcast, &tensor);
  return finish(g->broadcast(tensor, src), async_op);
}

std::shared_ptr<Work> all_gather_into_tensor(const Tensor& output, const Tensor& input,
                                             ProcessGroup* group, bool async_op) {
  auto g = resolve(group, "all_gather_into_tensor");
  check_defined(input, "all_gather_into_tensor", "input");
  check_defined(output, "all_gather_into_tensor", "output");
  EMBER_CHECK_KIND(
      Shape, output.numel() == input.numel() * g->size(), "[all_gather_into_tensor] output has ",
      output.numel(), " elements but a group of ", g->size(), " ranks gathers ",
      input.numel() * g->size(), " (", g->size(), " x input ", shape_str(input.sizes()), ")");
  EMBER_CHECK_KIND(DType, output.dtype() == input.dtype(), "[all_gather_into_tensor] output has ",
                   dtype_name(output.dtype()), " but input has ", dtype_name(input.dtype()));
  EMBER_CHECK_KIND(Device, output.device() == input.device(),
                   "[all_gather_into_tensor] output is on ", output.device().str(),
                   " but input is on ", input.device().str());
  check_same_call(*g, kAllGather, &input);
  return finish(g->all_gather_into_tensor(output, input), async_op);
}

std::shared_ptr<Work> all_gather(const std::vector<Tensor>& tensor_list, const Tensor& tensor,
                                 ProcessGroup* group, bool async_op) {
  auto g = resolve(group, "all_gather");
  check_defined(tensor, "all_gather", "tensor");
  EMBER_CHECK(static_cast<int>(tensor_list.size()) == g->size(), "[all_gather] tensor_list has ",
              tensor_list.size(), " tensors but the group has ", g->size(), " ranks");
  for (const auto& t : tensor_list) {
    check_defined(t, "all_gather", "an entry of tensor_list");
    check_like(t, tensor, "all_gather", "an entry of tensor_list");
  }
  Shape flat_shape{g->size()};
  for (int64_t s : tensor.sizes()) flat_shape.push_back(s);
  Tensor flat = empty(flat_shape, {.dtype = tensor.dtype(), .device = tensor.device()});
  check_same_call(*g, kAllGather, &tensor);
  auto work =
      std::make_shared<CopyOutWork>(g->all_gather_into_tensor(flat, tensor), flat, tensor_list);
  return finish(work, async_op);
}

std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op,
                                            ProcessGroup* group, bool async_op) {
  auto g = resolve(group, "reduce_scatter_tensor");
  check_defined(input, "reduce_scatter_tensor", "input");
  check_defined(output, "reduce_scatter_tensor", "output");
  EMBER_CHECK_KIND(Shape, input.numel() == output.numel() * g->size(),
                   "[reduce_scatter_tensor] input has ", input.numel(), " elements but a group of ",
                   g->size(), " ranks with output ", shape_str(output.sizes()), " needs ",
                   output.numel() * g->size());
  EMBER_CHECK_KIND(DType, output.dtype() == input.dtype(), "[reduce_scatter_tensor] output has ",
                   dtype_name(output.dtype()), " but input has ", dtype_name(input.dtype()));
  check_same_call(*g, kReduceScatter, &input, static_cast<int64_t>(op) + 1);
  return finish(g->reduce_scatter_tensor(output, input, op), async_op);
}

std::shared_ptr<Work> reduce(const Tensor& tensor, int dst, ReduceOp op, ProcessGroup* group,
                             bool async_op) {
  auto g = resolve(group, "reduce");
  check_defined(tensor, "reduce", "tensor");
  check_rank(*g, dst, "reduce", "dst");
  check_same_call(*g, kReduce, &tensor, static_cast<int64_t>(op) + 1);
  return finish(g->reduce(tensor, dst, op), async_op);
}

std::shared_ptr<Work> gather(const Tensor& tensor, const std::vector<Tensor>& gather_list, int dst,
                             ProcessGroup* group, bool async_op) {
  auto g = resolve(group, "gather");
  check_defined(tensor, "gather", "tensor");
  check_rank(*g, dst, "gather", "dst");
  if (g->rank() == dst) {
    EMBER_CHECK(static_cast<int>(gather_list.size()) == g->size(), "[gather] gather_list on dst ",
                dst, " has ", gather_list.size(), " tensors but the group has ", g->size(),
                " ranks");
    for (const auto& t : gather_list) {
      check_defined(t, "gather", "an entry of gather_list");
      check_like(t, tensor, "gather", "an entry of gather_list");
    }
  }
  check_same_call(*g, kGather, &tensor);
  return finish(g->gather(gather_list, tensor, dst), async_op);
}

std::shared_ptr<Work> scatter(const Tensor& tensor, const std::vector<Tensor>& scatter_list,
                              int src, ProcessGroup* group, bool async_op) {
  auto g = resolve(group, "scatter");
  check_defined(tensor, "scatter", "tensor");
  check_rank(*g, src, "scatter", "src");
  if (g->rank() == src) {
    EMBER_CHECK(static_cast<int>(scatter_list.size()) == g->size(),
                "[scatter] scatter_list on src ", src, " has ", scatter_list.size(),
                " tensors but the group has ", g->size(), " ranks");
    for (const auto& t : scatter_list) {
      check_defined(t, "scatter", "an entry of scatter_list");
      check_like(t, tensor, "scatter", "an entry of scatter_list");
    }
  }
  check_same_call(*g, kScatter, &tensor);
  return finish(g->scatter(tensor, scatter_list, src), async_op);
}

std::shared_ptr<Work> barrier(ProcessGroup* group, bool async_op) {
  auto g = resolve(group, "barrier");
  check_same_call(*g, kBarrier, nullptr);
  return finish(g->barrier(), async_op);
}

std::shared_ptr<Work> isend(const Tensor& tensor, int dst, ProcessGroup* group, int tag) {
  auto g = resolve(group, "send");
  check_defined(tensor, "send", "tensor");
  check_rank(*g, dst, "send", "dst");
  EMBER_CHECK(dst != g->rank(), "[send] rank ", dst, " cannot send to itself");
  EMBER_CHECK(tag >= 0, "[send] tag must be >= 0, got ", tag);
  return g->send(tensor, dst, tag);
}

std::shared_ptr<Work> irecv(const Tensor& tensor, int src, ProcessGroup* group, int tag) {
  auto g = resolve(group, "recv");
  check_defined(tensor, "recv", "tensor");
  check_rank(*g, src, "recv", "src");
  EMBER_CHECK(src != g->rank(), "[recv] rank ", src, " cannot receive from itself");
  EMBER_CHECK(tag >= 0, "[recv] tag must be >= 0, got ", tag);
  return g->recv(tensor, src, tag);
}

void send(const Tensor& tensor, int dst, ProcessGroup* group, int tag) {
  isend(tensor, dst, group, tag)->wait();
}
void recv(const Tensor& tensor, int src, ProcessGroup* group, int tag) {
  irecv(tensor, src, group, tag)->wait();
}

}  // namespace ember::distributed
