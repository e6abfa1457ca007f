// distributed/process_group_gloo.cpp: the gloo backend (CPU tensors; CUDA tensors are staged
// through host copies, as PyTorch's Gloo group does). Collectives run in call order on one worker
// thread per group, so async_op overlaps them with the caller (DDP's bucketed all-reduce during
// backward); each gets a fresh Gloo tag and the group's timeout. send/recv are posted at once on
// Gloo's unbound buffers and completed by Work::wait. Reductions are ember's own functions of
// every dtype (16-bit floats computed in float32 per pairwise step). A Gloo failure (a peer gone
// or past the timeout) becomes a DistributedError naming the collective, the rank and the timeout.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>

#include "distributed/gloo_store.h"
#include "distributed/group_factory.h"
#include "ember/autograd.h"

namespace ember::distributed::detail {
namespace {

using ember::detail::str_cat;

using ReduceFn = std::function<void(void*, const void*, const void*, size_t)>;

template <class T, class Acc>
ReduceFn make_reduce(ReduceOp op) {
  auto elementwise = [](auto f) -> ReduceFn {
    return [f](void* c, const void* a, const void* b, size_t n) {
      auto* C = static_cast<T*>(c);
      auto* A = static_cast<const T*>(a);
      auto* B = static_cast<const T*>(b);
      for (size_t i = 0; i < n; ++i) C[i] = static_cast<T>(f(Acc(A[i]), Acc(B[i])));
    };
  };
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::MAX:
      case ReduceOp::BOR:
        return elementwise([](bool x, bool y) { return x || y; });
      case ReduceOp::PRODUCT:
      case ReduceOp::MIN:
      case ReduceOp::BAND:
        return elementwise([](bool x, bool y) { return x && y; });
      case ReduceOp::BXOR:
        return elementwise([](bool x, bool y) { return x != y; });
      case ReduceOp::AVG:
        break;
    }
  } else {
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        return elementwise([](Acc x, Acc y) { return x + y; });
      case ReduceOp::PRODUCT:
        return elementwise([](Acc x, Acc y) { return x * y; });
      case ReduceOp::MIN:  // NaN wins, as torch.minimum
        return elementwise([](Acc x, Acc y) { return (x != x || x < y) ? x : y; });
      case ReduceOp::MAX:
        return elementwise([](Acc x, Acc y) { return (x != x || x > y) ? x : y; });
      case ReduceOp::BAND:
      case ReduceOp::BOR:
      case ReduceOp::BXOR:
        if constexpr (std::is_integral_v<T>) {
          if (op == ReduceOp::BAND) return elementwise([](Acc x, Acc y) { return x & y; });
          if (op == ReduceOp::BOR) return elementwise([](Acc x, Acc y) { return x | y; });
          return elementwise([](Acc x, Acc y) { return x ^ y; });
        }
        break;
    }
  }
  return nullptr;
}

ReduceFn reduce_function(DType dtype, ReduceOp op) {
  switch (dtype) {
#define EMBER_DTYPE(Name, T, Acc, ...) \
  case DType::Name:                    \
    return make_reduce<T, Acc>(op);
#include "ember/dtypes.def"
#undef EMBER_DTYPE
  }
  return nullptr;
}

// In place: x /= n (AVG after the sum), on a floating dtype.
void divide(void* data, DType dtype, size_t count, int n) {
  switch (dtype) {
#define EMBER_DTYPE(Name, T, Acc, ...)                                              \
  case DType::Name:                                                                 \
    if constexpr (!std::is_integral_v<T>) {                                         \
      auto* p = static_cast<T*>(data);                                              \
      for (size_t i = 0; i < count; ++i) p[i] = static_cast<T>(Acc(p[i]) / Acc(n)); \
    }                                                                               \
    return;
#include "ember/dtypes.def"
#undef EMBER_DTYPE
  }
}

// Calls f(T{}) with an unsigned type of the element size: Gloo only needs the size to move data.
template <class F>
void with_element(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    default:
      return f(uint64_t{});
  }
}

// A tensor as Gloo needs it: contiguous CPU memory. Other tensors are copied to such a buffer and
// (for outputs) back when the collective is done.
struct Staged {
  Tensor original;
  Tensor buffer;
  Staged() = default;
  explicit Staged(const Tensor& t) : original(t) {
    if (t.device().is_cpu() && t.is_contiguous()) {
      buffer = t;
    } else {
      NoGradGuard no_grad;
      buffer = t.to(Device("cpu")).contiguous();
    }
  }
  void* data() const { return buffer.raw_data_ptr(); }
  size_t count() const { return static_cast<size_t>(buffer.numel()); }
  void write_back() {
    if (buffer.is_same(original)) return;
    NoGradGuard no_grad;
    Tensor out = original;
    out.copy_(buffer);
  }
};

class GlooWork final : public Work {
 public:
  bool is_completed() override {
    std::lock_guard lock(mutex_);
    return done_;
  }
  void wait() override {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }
  double run_seconds() const override {
    std::lock_guard lock(mutex_);
    return done_ ? seconds_ : 0;
  }
  void finish(std::exception_ptr error, double seconds) {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
      error_ = std::move(error);
      seconds_ = seconds;
    }
    cv_.notify_all();
  }

 private:
  mutable std::mutex mutex_;
  double seconds_ = 0;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

class GlooGroup;

// send/recv: posted at construction, completed (or failed) by wait.
class PointToPointWork final : public Work {
 public:
  PointToPointWork(std::unique_ptr<gloo::transport::UnboundBuffer> buffer, Staged staged,
                   bool is_send, std::string what, std::chrono::milliseconds timeout)
      : buffer_(std::move(buffer)),
        staged_(std::move(staged)),
        is_send_(is_send),
        what_(std::move(what)),
        timeout_(timeout) {}
  bool is_completed() override { return done_; }
  void wait() override;

 private:
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer_;
  Staged staged_;
  bool is_send_;
  std::string what_;
  std::chrono::milliseconds timeout_;
  bool done_ = false;
};

std::string seconds(std::chrono::milliseconds t) {
  return str_cat(static_cast<double>(t.count()) / 1000.0, " s");
}

// Gloo's failure as ember's: what failed, where, and what to look at.
DistributedError failure(const std::string& what, const std::exception& e,
                         std::chrono::milliseconds timeout) {
  return DistributedError(str_cat(what, " failed (gloo): ", e.what(),
                                  "; a peer rank may have exited, crashed or stalled (timeout ",
                                  seconds(timeout),
                                  "), or the ranks called different collectives"));
}

void PointToPointWork::wait() {
  if (done_) return;
  try {
    bool ok =
        is_send_ ? buffer_->waitSend(nullptr, timeout_) : buffer_->waitRecv(nullptr, timeout_);
    if (!ok) throw DistributedError(str_cat(what_, " timed out after ", seconds(timeout_)));
  } catch (const gloo::Exception& e) {
    throw failure(what_, e, timeout_);
  }
  if (!is_send_) staged_.write_back();
  done_ = true;
}

constexpr uint64_t kPointToPointSlot = uint64_t{0x7e} << 56;

// Gloo writes to its sockets without MSG_NOSIGNAL: when a peer has died, the write would kill this
// process with SIGPIPE instead of failing the collective with a clear error. Ignore SIGPIPE unless
// the program handles it itself (Python programs such as PyTorch's ignore it from the start).
void ignore_sigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
    ::signal(SIGPIPE, SIG_IGN);
}

class GlooGroup final : public ProcessGroup {
 public:
  explicit GlooGroup(const GroupSpec& spec)
      : ProcessGroup(spec.rank, spec.size, spec.global_ranks, spec.timeout) {
    ignore_sigpipe();
    gloo::transport::tcp::attr attr;
    const char* iface = std::getenv("GLOO_SOCKET_IFNAME");
    if (iface && *iface) {
      attr.iface = iface;
    } else {
      attr.hostname = spec.local_address.empty() ? "127.0.0.1" : spec.local_address;
    }
    try {
      device_ = gloo::transport::tcp::CreateDevice(attr);
      auto context = std::make_shared<gloo::rendezvous::Context>(spec.rank, spec.size);
      context->setTimeout(spec.timeout);
      GlooStore store(spec.store);
      context->connectFullMesh(store, device_);
      context_ = context;
    } catch (const gloo::Exception& e) {
      throw DistributedError(str_cat("[init_process_group] rank ", spec.rank, " of ", spec.size,
                                     ": Gloo could not connect to its peers (listening on ",
                                     iface && *iface ? iface : attr.hostname.c_str(),
                                     "): ", e.what(),
                                     "; set GLOO_SOCKET_IFNAME to the network interface the ranks "
                                     "reach each other on"));
    }
    worker_ = std::thread([this] { run(); });
  }
  ~GlooGroup() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  std::string backend_name() const override { return "gloo"; }

  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) override {
    ReduceFn fn = checked_reduce("all_reduce", tensor.dtype(), op);
    auto t = std::make_shared<Staged>(tensor);
    return enqueue(
        "all_reduce",
        [this, t, fn, op](uint32_t tag) {
          with_element(t->buffer.element_size(), [&](auto e) {
            using E = decltype(e);
            gloo::AllreduceOptions o(context_);
            o.setOutput<E>(static_cast<E*>(t->data()), t->count());
            o.setReduceFunction(fn);
            o.setTag(tag);
            o.setTimeout(timeout());
            gloo::allreduce(o);
          });
          if (op == ReduceOp::AVG) divide(t->data(), t->buffer.dtype(), t->count(), size());
          t->write_back();
        },
        t->count() == 0);
  }

  std::shared_ptr<Work> broadcast(const Tensor& tensor, int src) override {
    auto t = std::make_shared<Staged>(tensor);
    return enqueue(
        "broadcast",
        [this, t, src](uint32_t tag) {
          with_element(t->buffer.element_size(), [&](auto e) {
            using E = decltype(e);
            gloo::BroadcastOptions o(context_);
            o.setOutput<E>(static_cast<E*>(t->data()), t->count());
            o.setRoot(src);
            o.setTag(tag);
            o.setTimeout(timeout());
            gloo::broadcast(o);
          });
          t->write_back();
        },
        t->count() == 0);
  }

  std::shared_ptr<Work> all_gather_into_tensor(const Tensor& output, const Tensor& input) override {
    auto in = std::make_shared<Staged>(input);
    auto out = std::make_shared<Staged>(output);
    return enqueue(
        "all_gather_into_tensor",
        [this, in, out](uint32_t tag) {
          with_element(in->buffer.element_size(), [&](auto e) {
            using E = decltype(e);
            gloo::AllgatherOptions o(context_);
            o.setInput<E>(static_cast<E*>(in->data()), in->count());
            o.setOutput<E>(static_cast<E*>(out->data()), out->count());
            o.setTag(tag);
            o.setTimeout(timeout());
            gloo::allgather(o);
          });
          out->write_back();
        },
        in->count() == 0);
  }

  // An all-reduce of a copy of the input, this rank's chunk kept: Gloo 0.5 has no reduce-scatter
  // of the new API (twice the traffic of a ring reduce-scatter).
  std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& output, const Tensor& input,
                                              ReduceOp op) override {
    ReduceFn fn = checked_reduce("reduce_scatter_tensor", input.dtype(), op);
    auto out = std::make_shared<Staged>(output);
    Tensor scratch;
    {
      NoGradGuard no_grad;
      scratch = input.to(Device("cpu"), false, true).contiguous();
    }
    return enqueue(
        "reduce_scatter_tensor",
        [this, out, scratch, fn, op](uint32_t tag) {
          size_t n = static_cast<size_t>(scratch.numel());
          with_element(scratch.element_size(), [&](auto e) {
            using E = decltype(e);
            gloo::AllreduceOptions o(context_);
            o.setOutput<E>(static_cast<E*>(scratch.raw_data_ptr()), n);
            o.setReduceFunction(fn);
            o.setTag(tag);
            o.setTimeout(timeout());
            gloo::allreduce(o);
          });
          size_t chunk = out->count() * scratch.element_size();
          std::memcpy(out->data(),
                      static_cast<const char*>(scratch.raw_data_ptr()) +
                          chunk * static_cast<size_t>(rank()),
                      chunk);
          if (op == ReduceOp::AVG) divide(out->data(), out->buffer.dtype(), out->count(), size());
          out->write_back();
        },
        out->count() == 0);
  }

  std::shared_ptr<Work> reduce(const Tensor& tensor, int dst, ReduceOp op) override {
    ReduceFn fn = checked_reduce("reduce", tensor.dtype(), op);
    // Gloo uses every rank's buffer as scratch: ranks other than dst reduce a copy.
    auto t = std::make_shared<Staged>(tensor);
    if (rank() != dst) {
      NoGradGuard no_grad;
      t->buffer = t->buffer.clone();
      t->original = t->buffer;
    }
    return enqueue(
        "reduce",
        [this, t, fn, op, dst](uint32_t tag) {
          with_element(t->buffer.element_size(), [&](auto e) {
            using E = decltype(e);
            gloo::ReduceOptions o(context_);
            o.setOutput<E>(static_cast<E*>(t->data()), t->count());
            o.setRoot(dst);
            o.setReduceFunction(fn);
            o.setTag(tag);
            o.setTimeout(timeout());
            gloo::reduce(o);
          });
          if (rank() == dst) {
            if (op == ReduceOp::AVG) divide(t->data(), t->buffer.dtype(), t->count(), size());
            t->write_back();
          }
        },
        t->count() == 0);
  }

  std::shared_ptr<Work> gather(const std::vector<Tensor>& gather_list, const Tensor& input,
                               int dst) override {
    auto in = std::make_shared<Staged>(input);
    auto outs = std::make_shared<std::vector<Staged>>();
    if (rank() == dst)
      for (const auto& t : gather_list) outs->emplace_back(t);
    return enqueue(
        "gather",
        [this, in, outs, dst](uint32_t tag) {
          size_t n = in->count(), bytes = n * in->buffer.element_size();
          std::vector<char> all(rank() == dst ? bytes * static_cast<size_t>(size()) : 0);
          with_element(in->buffer.element_size(), [&](auto e) {
            using E = decltype(e);
            gloo::GatherOptions o(context_);
            o.setInput<E>(static_cast<E*>(in->data()), n);
            if (rank() == dst) o.setOutput<E>(reinterpret_cast<E*>(all.data()), n * size());
            o.setRoot(dst);
            o.setTag(tag);
            o.setTimeout(timeout());
            gloo::gather(o);
          });
          if (rank() == dst) {
            for (size_t r = 0; r < outs->size(); ++r) {
              std::memcpy((*outs)[r].data(), all.data() + r * bytes, bytes);
              (*outs)[r].write_back();
            }
          }
        },
        in->count() == 0);
  }

  std::shared_ptr<Work> scatter(const Tensor& output, const std::vector<Tensor>& scatter_list,
                                int src) override {
    auto out = std::make_shared<Staged>(output);
    auto ins = std::make_shared<std::vector<Staged>>();
    if (rank() == src)
      for (const auto& t : scatter_list) ins->emplace_back(t);
    return enqueue(
        "scatter",
        [this, out, ins, src](uint32_t tag) {
          with_element(out->buffer.element_size(), [&](auto e) {
            using E = decltype(e);
            gloo::ScatterOptions o(context_);
            if (rank() == src) {
              std::vector<E*> ptrs;
              for (auto& s : *ins) ptrs.push_back(static_cast<E*>(s.data()));
              o.setInputs<E>(ptrs, out->count());
            }
            o.setOutput<E>(static_cast<E*>(out->data()), out->count());
            o.setRoot(src);
            o.setTag(tag);
            o.setTimeout(timeout());
            gloo::scatter(o);
          });
          out->write_back();
        },
        out->count() == 0);
  }

  std::shared_ptr<Work> barrier() override {
    return enqueue(
        "barrier",
        [this](uint32_t tag) {
          gloo::BarrierOptions o(context_);
          o.setTag(tag);
          o.setTimeout(timeout());
          gloo::barrier(o);
        },
        false);
  }

  std::shared_ptr<Work> send(const Tensor& tensor, int dst, int tag) override {
    Staged t(tensor);
    std::string what = str_cat("[send] rank ", rank(), " of ", size(), " to rank ", dst);
    try {
      auto buffer = context_->createUnboundBuffer(t.data(), t.buffer.nbytes());
      buffer->send(dst, kPointToPointSlot | static_cast<uint32_t>(tag));
      return std::make_shared<PointToPointWork>(std::move(buffer), std::move(t), true, what,
                                                timeout());
    } catch (const gloo::Exception& e) {
      throw failure(what, e, timeout());
    }
  }
  std::shared_ptr<Work> recv(const Tensor& tensor, int src, int tag) override {
    Staged t(tensor);
    std::string what = str_cat("[recv] rank ", rank(), " of ", size(), " from rank ", src);
    try {
      auto buffer = context_->createUnboundBuffer(t.data(), t.buffer.nbytes());
      buffer->recv(src, kPointToPointSlot | static_cast<uint32_t>(tag));
      return std::make_shared<PointToPointWork>(std::move(buffer), std::move(t), false, what,
                                                timeout());
    } catch (const gloo::Exception& e) {
      throw failure(what, e, timeout());
    }
  }

 private:
  ReduceFn checked_reduce(const char* op_name, DType dtype, ReduceOp op) {
    EMBER_CHECK(op != ReduceOp::AVG || is_floating_point(dtype), "[", op_name,
                "] ReduceOp::AVG needs a floating dtype, got ", dtype_name(dtype),
                "; use SUM and divide");
    ReduceFn fn = reduce_function(dtype, op);
    EMBER_CHECK(fn != nullptr, "[", op_name, "] ReduceOp::", reduce_op_name(op),
                " is not defined for ", dtype_name(dtype),
                " (bitwise ops take integer or bool tensors)");
    return fn;
  }

  struct Job {
    std::string name;
    uint32_t tag;
    std::function<void(uint32_t)> run;
    std::shared_ptr<GlooWork> work;
  };

  std::shared_ptr<Work> enqueue(const char* name, std::function<void(uint32_t)> run, bool empty) {
    if (empty) return std::make_shared<CompletedWork>();
    auto work = std::make_shared<GlooWork>();
    {
      std::lock_guard lock(mutex_);
      queue_.push_back({str_cat("[", name, "] rank ", rank(), " of ", size()), next_tag_++,
                        std::move(run), work});
    }
    cv_.notify_all();
    return work;
  }

  void run() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      std::exception_ptr error;
      auto start = std::chrono::steady_clock::now();
      try {
        job.run(job.tag);
      } catch (const gloo::Exception& e) {
        error = std::make_exception_ptr(failure(job.name, e, timeout()));
      } catch (...) {
        error = std::current_exception();
      }
      job.work->finish(
          std::move(error),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }

  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  uint32_t next_tag_ = 1;
  std::thread worker_;
};

}  // namespace

std::shared_ptr<ProcessGroup> make_gloo_group(const GroupSpec& spec) {
  return std::make_shared<GlooGroup>(spec);
}

}  // namespace ember::distributed::detail
