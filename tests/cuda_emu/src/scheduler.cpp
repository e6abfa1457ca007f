// tests/cuda_emu/src/scheduler.cpp: kernel launches on the emulated device. The launch's
// configuration and pointer arguments are checked as the hardware would refuse them; then its
// blocks run one after another, each block's threads as fibers (Boost.Context) on the calling
// thread. A fiber runs threads one after another until one has to wait -- at __syncthreads or at
// a warp operation -- and the next thread then starts on a fresh fiber, so kernels without
// barriers cost one fiber per block. When no thread can run, the block's barrier opens if every
// thread waits at it, and anything else is a deadlock on the hardware too: a fault naming where
// each thread waits.
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>
#include <deque>
#include <exception>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember_cuda_emu/device.h"
#include "emu_internal.h"

namespace ember_cuda_emu {

int max_dynamic_shared(const void* kernel);

thread_local ThreadState* tls_thread = nullptr;
thread_local BlockState* tls_block = nullptr;

namespace {

namespace ctx = boost::context;

constexpr size_t kStackBytes = 256 * 1024;
constexpr size_t kPage = 4096;
constexpr size_t kSharedGuard = 64;
constexpr unsigned char kSharedGuardByte = 0x5a;

struct KernelFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string where_str(const std::source_location& w) {
  std::string f = w.file_name();
  auto slash = f.rfind('/');
  return (slash == std::string::npos ? f : f.substr(slash + 1)) + ":" + std::to_string(w.line());
}

// Fiber stacks with a guard page below, kept per host thread for the next block.
struct StackPool {
  std::vector<ctx::stack_context> idle;
  ~StackPool() {
    for (auto& s : idle) munmap(static_cast<char*>(s.sp) - s.size - kPage, s.size + kPage);
  }
};
thread_local StackPool tls_stacks;

struct PooledStack {
  ctx::stack_context allocate() {
    if (!tls_stacks.idle.empty()) {
      ctx::stack_context s = tls_stacks.idle.back();
      tls_stacks.idle.pop_back();
      return s;
    }
    void* p = mmap(nullptr, kStackBytes + kPage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    mprotect(p, kPage, PROT_NONE);
    ctx::stack_context s;
    s.size = kStackBytes;
    s.sp = static_cast<char*>(p) + kPage + kStackBytes;
    return s;
  }
  void deallocate(ctx::stack_context& s) noexcept { tls_stacks.idle.push_back(s); }
};

struct Group {
  WarpOp op;
  unsigned mask;
  unsigned arrived = 0;
  std::source_location where;
  std::shared_ptr<WarpValues> values = std::make_shared<WarpValues>();
};

struct Worker;

struct Thread {
  ThreadState state;
  bool done = false;
  Worker* worker = nullptr;  // the fiber it runs on, once started
};

struct Worker {
  ctx::fiber cont;  // resumes the worker
  ctx::fiber sink;  // resumes the scheduler
  int thread = -1;
};

const char* op_name(WarpOp op) {
  switch (op) {
    case WarpOp::Syncwarp:
      return "__syncwarp";
    case WarpOp::Shfl:
      return "a __shfl*_sync";
    case WarpOp::Vote:
      return "a __ballot/__any/__all_sync";
    case WarpOp::Wmma:
      return "a wmma operation";
  }
  return "?";
}

std::string hex_mask(unsigned m) {
  std::ostringstream os;
  os << "0x" << std::hex << m;
  return os.str();
}

struct Block {
  BlockState state;
  std::vector<Thread> threads;
  std::vector<std::vector<std::shared_ptr<Group>>> open;  // per warp
  const std::function<void()>* body = nullptr;
  int next = 0;  // the next thread to start
  int done = 0;
  int at_barrier = 0;
  std::source_location barrier_where;
  std::deque<int> runnable;
  std::vector<std::unique_ptr<Worker>> workers;
  bool aborted = false;
  std::string fault;
  Worker* current = nullptr;

  int count() const { return static_cast<int>(threads.size()); }
  void abort(const std::string& what) {
    if (!aborted) fault = what;
    aborted = true;
  }
};

thread_local Block* tls_run = nullptr;

// Switches from the current thread's fiber back to the scheduler until it is resumed.
void suspend() {
  Block& b = *tls_run;
  Worker* w = b.current;
  w->sink = std::move(w->sink).resume();
}

void run_threads(Block& b, Worker* w) {
  while (!b.aborted && b.next < b.count()) {
    int t = b.next++;
    Thread& th = b.threads[t];
    th.worker = w;
    w->thread = t;
    tls_thread = &th.state;
    (*b.body)();
    th.done = true;
    ++b.done;
  }
}

void resume(Block& b, Worker* w) {
  b.current = w;
  if (w->thread >= 0) tls_thread = &b.threads[w->thread].state;
  w->cont = std::move(w->cont).resume();
  b.current = nullptr;
}

void start_worker(Block& b) {
  b.workers.push_back(std::make_unique<Worker>());
  Worker* w = b.workers.back().get();
  w->cont = ctx::fiber(std::allocator_arg, PooledStack{}, [&b, w](ctx::fiber&& sink) {
    w->sink = std::move(sink);
    try {
      run_threads(b, w);
    } catch (const ctx::detail::forced_unwind&) {
      throw;
    } catch (const KernelFault& f) {
      b.abort(f.what());
    } catch (const std::exception& e) {
      b.abort(std::string("device code threw: ") + e.what());
    }
    return std::move(w->sink);
  });
  resume(b, w);
}

std::string describe_waits(const Block& b) {
  std::ostringstream os;
  int exited = b.done;
  if (b.at_barrier)
    os << b.at_barrier << " thread(s) wait at __syncthreads (" << where_str(b.barrier_where)
       << "); ";
  for (size_t w = 0; w < b.open.size(); ++w)
    for (const auto& g : b.open[w]) {
      unsigned missing = g->mask & ~g->arrived;
      os << "warp " << w << ": lanes " << hex_mask(g->arrived) << " wait at " << op_name(g->op)
         << " (" << where_str(g->where) << ") with mask " << hex_mask(g->mask) << ", lanes "
         << hex_mask(missing) << " never arrive; ";
    }
  if (exited) os << exited << " thread(s) have exited";
  return os.str();
}

// No thread can run: opens the barrier or reports the deadlock.
void resolve(Block& b) {
  bool warps_waiting = false;
  for (const auto& w : b.open) warps_waiting |= !w.empty();
  if (b.at_barrier > 0 && !warps_waiting && b.at_barrier + b.done == b.count()) {
    if (b.done > 0) {
      b.abort("__syncthreads (" + where_str(b.barrier_where) + ") is reached by " +
              std::to_string(b.at_barrier) + " of the block's " + std::to_string(b.count()) +
              " threads; the others have exited (a barrier some threads skip deadlocks or "
              "misbehaves on the GPU)");
      return;
    }
    for (int t = 0; t < b.count(); ++t) {
      b.runnable.push_back(t);
    }
    b.at_barrier = 0;
    return;
  }
  b.abort("deadlock: " + describe_waits(b));
}

void run_block(Block& b) {
  while (!b.aborted) {
    if (!b.runnable.empty()) {
      int t = b.runnable.front();
      b.runnable.pop_front();
      resume(b, b.threads[t].worker);
    } else if (b.next < b.count()) {
      start_worker(b);
    } else if (b.done == b.count()) {
      break;
    } else {
      resolve(b);
    }
  }
  b.workers.clear();  // unwinds the fibers of threads left waiting after a fault
}

void fill_shared_guard(BlockState& s) {
  std::memset(s.dynamic_shared + s.dynamic_shared_bytes, kSharedGuardByte, kSharedGuard);
}

bool shared_guard_intact(const BlockState& s) {
  for (size_t i = 0; i < kSharedGuard; ++i)
    if (s.dynamic_shared[s.dynamic_shared_bytes + i] != kSharedGuardByte) return false;
  return true;
}

std::string site_str(const LaunchSite& site) {
  std::string f = site.file;
  auto slash = f.rfind('/');
  return std::string("kernel ") + site.kernel_name + " (launched at " +
         (slash == std::string::npos ? f : f.substr(slash + 1)) + ":" + std::to_string(site.line) +
         ")";
}

std::string dims(const uint3& d) {
  std::ostringstream os;
  os << "(" << d.x << ", " << d.y << ", " << d.z << ")";
  return os.str();
}

// Runs every block of the grid; returns the fault, or "".
std::string run_grid(const LaunchSite& site, const std::function<void()>& per_thread) {
  const dim3 g = site.grid, bd = site.block;
  const int n = static_cast<int>(bd.x * bd.y * bd.z);
  // Aligned as the hardware's shared memory window (kernels declare it __align__(128)).
  std::unique_ptr<unsigned char, decltype(&std::free)> smem_block(
      static_cast<unsigned char*>(
          std::aligned_alloc(1024, (site.shared_bytes + kSharedGuard + 1023) / 1024 * 1024)),
      &std::free);
  if (!smem_block) throw std::bad_alloc();
  unsigned char* smem = smem_block.get();
  ThreadState* saved_thread = tls_thread;
  BlockState* saved_block = tls_block;
  Block* saved_run = tls_run;
  std::string fault;
  for (unsigned z = 0; z < g.z && fault.empty(); ++z)
    for (unsigned y = 0; y < g.y && fault.empty(); ++y)
      for (unsigned x = 0; x < g.x && fault.empty(); ++x) {
        Block b;
        b.state.idx = uint3{x, y, z};
        b.state.dim = bd;
        b.state.grid = g;
        b.state.dynamic_shared = smem;
        b.state.dynamic_shared_bytes = site.shared_bytes;
        std::memset(smem, 0xff, site.shared_bytes);
        fill_shared_guard(b.state);
        b.threads.resize(static_cast<size_t>(n));
        for (int t = 0; t < n; ++t) {
          ThreadState& s = b.threads[t].state;
          s.linear = t;
          s.idx = uint3{t % bd.x, t / bd.x % bd.y, t / (bd.x * bd.y)};
          s.lane = t % 32;
          s.warp = t / 32;
        }
        b.open.resize(static_cast<size_t>((n + 31) / 32));
        b.body = &per_thread;
        tls_block = &b.state;
        tls_run = &b;
        run_block(b);
        if (b.aborted) {
          fault = "block " + dims(b.state.idx) + ": " + b.fault;
        } else if (!shared_guard_intact(b.state)) {
          fault = "block " + dims(b.state.idx) + ": out-of-bounds write past the " +
                  std::to_string(site.shared_bytes) + " bytes of dynamic shared memory";
        }
      }
  tls_thread = saved_thread;
  tls_block = saved_block;
  tls_run = saved_run;
  return fault;
}

}  // namespace

[[noreturn]] void kernel_fault(const std::string& what, const std::source_location& where) {
  const ThreadState* t = tls_thread;
  throw KernelFault("thread " + (t ? dims(t->idx) : std::string("?")) + " at " + where_str(where) +
                    ": " + what);
}

void block_barrier(const std::source_location& where) {
  Block& b = *tls_run;
  if (b.at_barrier == 0)
    b.barrier_where = where;
  else if (where.line() != b.barrier_where.line() ||
           (where.file_name() != b.barrier_where.file_name() &&
            std::strcmp(where.file_name(), b.barrier_where.file_name()) != 0))
    kernel_fault("waits at __syncthreads (" + where_str(where) + ") while others wait at " +
                     where_str(b.barrier_where),
                 where);
  ++b.at_barrier;
  suspend();
}

std::shared_ptr<const WarpValues> warp_collective(WarpOp op, unsigned mask, const void* value,
                                                  size_t bytes, const std::source_location& where) {
  Block& b = *tls_run;
  const int lane = tls_thread->lane, warp = tls_thread->warp;
  if (!(mask >> lane & 1u))
    kernel_fault(std::string(op_name(op)) + " with mask " + hex_mask(mask) + " leaves out lane " +
                     std::to_string(lane) + " itself",
                 where);
  auto& open = b.open[static_cast<size_t>(warp)];
  std::shared_ptr<Group> g;
  for (auto& o : open)
    if (o->mask == mask && !(o->arrived >> lane & 1u)) {
      g = o;
      break;
    }
  if (!g) {
    for (int l = 0; l < 32; ++l) {
      if (!(mask >> l & 1u)) continue;
      int other = warp * 32 + l;
      if (other >= b.count())
        kernel_fault(std::string(op_name(op)) + " with mask " + hex_mask(mask) + " names lane " +
                         std::to_string(l) + ", which the block does not have",
                     where);
      if (b.threads[other].done)
        kernel_fault(std::string(op_name(op)) + " with mask " + hex_mask(mask) + " names lane " +
                         std::to_string(l) + ", which has exited",
                     where);
    }
    g = std::make_shared<Group>();
    g->op = op;
    g->mask = mask;
    g->where = where;
    g->values->mask = mask;
    open.push_back(g);
  } else if (g->op != op) {
    kernel_fault(std::string("lanes of warp ") + std::to_string(warp) +
                     " meet at different warp operations: " + op_name(op) + " here and " +
                     op_name(g->op) + " at " + where_str(g->where),
                 where);
  }
  if (bytes) std::memcpy(g->values->bytes[lane], value, bytes);
  g->arrived |= 1u << lane;
  if (g->arrived == mask) {
    for (int l = 0; l < 32; ++l) {
      if (l == lane || !(mask >> l & 1u)) continue;
      b.runnable.push_back(warp * 32 + l);
    }
    std::erase(open, g);
    return g->values;
  }
  suspend();
  return g->values;
}

void submit_kernel(const LaunchSite& site, const void* kernel, std::function<void()> per_thread,
                   const std::vector<std::pair<int, const void*>>& pointer_args) {
  const dim3 g = site.grid, bd = site.block;
  const uint64_t threads = uint64_t{bd.x} * bd.y * bd.z;
  if (threads == 0 || threads > 1024 || bd.x > 1024 || bd.y > 1024 || bd.z > 64 || g.x == 0 ||
      g.y == 0 || g.z == 0 || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535) {
    record_error(cudaErrorInvalidConfiguration,
                 site_str(site) + ": grid " + dims(uint3{g.x, g.y, g.z}) + " of blocks " +
                     dims(uint3{bd.x, bd.y, bd.z}) + " is not a launch the device takes");
    return;
  }
  const int limit = max_dynamic_shared(kernel);
  if (site.shared_bytes > static_cast<size_t>(limit)) {
    record_error(
        cudaErrorInvalidValue,
        site_str(site) + ": " + std::to_string(site.shared_bytes) +
            " bytes of dynamic shared memory, above the kernel's limit of " +
            std::to_string(limit) +
            " (raise it with cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize))");
    return;
  }
  const int device = current_device();
  const int sdev = stream_device(site.stream);
  if (sdev < 0) {
    record_error(cudaErrorInvalidResourceHandle, site_str(site) + ": not a live stream");
    return;
  }
  if (sdev != device) {
    record_error(cudaErrorInvalidResourceHandle,
                 site_str(site) + ": launched on a stream of cuda:" + std::to_string(sdev) +
                     " while cuda:" + std::to_string(device) + " is current");
    return;
  }
  for (auto [index, p] : pointer_args) {
    if (!p) continue;
    Allocation a{};
    std::ostringstream os;
    if (!find_allocation(p, 0, &a)) {
      os << site_str(site) << ": pointer argument " << index << " (" << p
         << ") is not in device memory";
    } else if (a.device >= 0 && !can_access(device, a.device)) {
      os << site_str(site) << ": pointer argument " << index << " is memory of cuda:" << a.device
         << ", which cuda:" << device << " cannot access (no peer access)";
    } else {
      continue;
    }
    count_fault();
    record_error(cudaErrorIllegalAddress, os.str());
    return;
  }
  LaunchSite s = site;
  cudaError_t err =
      submit_work(site.stream, "kernel launch", [s, per_thread = std::move(per_thread)] {
        std::string fault = run_grid(s, per_thread);
        if (fault.empty()) fault = check_guards();
        if (!fault.empty()) {
          count_fault();
          record_error(cudaErrorLaunchFailure, site_str(s) + ": " + fault);
        }
      });
  (void)err;  // recorded as the last error already
}

}  // namespace ember_cuda_emu
