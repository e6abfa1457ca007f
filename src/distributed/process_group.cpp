// distributed/process_group.cpp: init_process_group and the groups it makes -- options from the
// init method and torchrun's environment, the store, the rendezvous (every rank checks in; a
// missing rank is named on timeout), the backend ("auto": Gloo for CPU tensors and, with CUDA and
// NCCL, NCCL for CUDA tensors in one group), new_group and destroy_process_group.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "distributed/group_factory.h"
#include "ember/cuda.h"

namespace ember::distributed {
namespace {

using std::chrono::milliseconds;

struct State {
  std::shared_ptr<Store> store;
  std::shared_ptr<ProcessGroup> world;
  std::string backend;
  std::string local_address;
  std::string file_path;  // file:// stores: removed by the last rank to leave
  int groups_made = 0;
};

std::mutex& state_mutex() {
  static std::mutex m;
  return m;
}
State& state() {
  static State s;
  return s;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

int env_int(const char* name, int given, const char* what) {
  if (given >= 0) return given;
  const char* v = std::getenv(name);
  EMBER_CHECK(v && *v, "[init_process_group] ", what, " is not given and ", name,
              " is not set; start the program with `ember run --nproc-per-node N ...` (or "
              "torchrun), or set InitOptions.",
              what);
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  EMBER_CHECK(end && *end == 0 && n >= 0, "[init_process_group] ", name, "='", v,
              "' is not a non-negative integer");
  return static_cast<int>(n);
}

milliseconds default_timeout() {
  const char* v = std::getenv("EMBER_DISTRIBUTED_TIMEOUT_S");
  if (v && *v) {
    double s = std::strtod(v, nullptr);
    if (s > 0) return milliseconds(static_cast<int64_t>(s * 1000));
  }
  return std::chrono::minutes(30);
}

std::string host_name() {
  char name[256] = {0};
  if (::gethostname(name, sizeof name - 1) != 0) return "127.0.0.1";
  return name;
}

// "auto": CPU tensors on Gloo, CUDA tensors on NCCL when both are there; one of them otherwise.
class DeviceRoutedGroup final : public ProcessGroup {
 public:
  DeviceRoutedGroup(const detail::GroupSpec& spec, std::shared_ptr<ProcessGroup> cpu,
                    std::shared_ptr<ProcessGroup> cuda)
      : ProcessGroup(spec.rank, spec.size, spec.global_ranks, spec.timeout),
        cpu_(std::move(cpu)),
        cuda_(std::move(cuda)) {}
  std::string backend_name() const override { return "cpu:gloo,cuda:nccl"; }
  std::shared_ptr<Work> all_reduce(const Tensor& t, ReduceOp op) override {
    return on(t).all_reduce(t, op);
  }
  std::shared_ptr<Work> broadcast(const Tensor& t, int src) override {
    return on(t).broadcast(t, src);
  }
  std::shared_ptr<Work> all_gather_into_tensor(const Tensor& out, const Tensor& in) override {
    return on(in).all_gather_into_tensor(out, in);
  }
  std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& out, const Tensor& in,
                                              ReduceOp op) override {
    return on(in).reduce_scatter_tensor(out, in, op);
  }
  std::shared_ptr<Work> reduce(const Tensor& t, int dst, ReduceOp op) override {
    return on(t).reduce(t, dst, op);
  }
  std::shared_ptr<Work> gather(const std::vector<Tensor>& list, const Tensor& in,
                               int dst) override {
    return on(in).gather(list, in, dst);
  }
  std::shared_ptr<Work> scatter(const Tensor& out, const std::vector<Tensor>& list,
                                int src) override {
    return on(out).scatter(out, list, src);
  }
  // Barriers go through Gloo: they need no device.
  std::shared_ptr<Work> barrier() override { return cpu_->barrier(); }
  std::shared_ptr<Work> send(const Tensor& t, int dst, int tag) override {
    return on(t).send(t, dst, tag);
  }
  std::shared_ptr<Work> recv(const Tensor& t, int src, int tag) override {
    return on(t).recv(t, src, tag);
  }

 private:
  ProcessGroup& on(const Tensor& t) { return t.device().is_cuda() ? *cuda_ : *cpu_; }
  std::shared_ptr<ProcessGroup> cpu_;
  std::shared_ptr<ProcessGroup> cuda_;
};

std::shared_ptr<ProcessGroup> make_group(const std::string& backend, detail::GroupSpec spec,
                                         const std::string& prefix,
                                         const std::shared_ptr<Store>& store) {
  auto with_prefix = [&](const char* name) {
    detail::GroupSpec s = spec;
    s.store = std::make_shared<PrefixStore>(prefix + "/" + name, store);
    return s;
  };
  if (backend == "gloo") return detail::make_gloo_group(with_prefix("gloo"));
  if (backend == "nccl") return detail::make_nccl_group(with_prefix("nccl"));
  // cpu:gloo,cuda:nccl
  auto cpu = detail::make_gloo_group(with_prefix("gloo"));
  auto gpu = detail::make_nccl_group(with_prefix("nccl"));
  return std::make_shared<DeviceRoutedGroup>(spec, std::move(cpu), std::move(gpu));
}

std::string resolve_backend(std::string backend) {
  std::transform(backend.begin(), backend.end(), backend.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (backend == "auto" || backend.empty()) {
    bool nccl = is_nccl_available() && cuda::is_available();
    if (nccl && is_gloo_available()) return "cpu:gloo,cuda:nccl";
    if (nccl) return "nccl";
    return "gloo";
  }
  if (backend == "cpu:gloo,cuda:nccl") return backend;
  EMBER_CHECK(backend == "gloo" || backend == "nccl", "[init_process_group] unknown backend '",
              backend, "'; use \"gloo\" (CPU tensors), \"nccl\" (CUDA tensors) or \"auto\"");
  if (backend == "gloo")
    EMBER_CHECK(is_gloo_available(),
                "[init_process_group] backend 'gloo' is not available: ember was built "
                "without Gloo (install Debian's libgloo-dev and rebuild)");
  if (backend == "nccl")
    EMBER_CHECK(is_nccl_available(),
                "[init_process_group] backend 'nccl' is not available: ember was built "
                "without NCCL (a CUDA build finds the CUDA toolkit's NCCL); use backend "
                "'gloo' for CPU tensors");
  return backend;
}

// Every rank checks in; rank 0's world size is the one all must have.
void rendezvous(Store& store, int rank, int world_size, milliseconds timeout,
                const std::string& where) {
  auto ws = std::to_string(world_size);
  if (rank == 0) store.set("world_size", std::vector<uint8_t>(ws.begin(), ws.end()));
  store.set("joined/" + std::to_string(rank), {1});
  auto master_ws = store.get("world_size");
  std::string got(master_ws.begin(), master_ws.end());
  EMBER_CHECK(got == ws, "[init_process_group] rank ", rank, " has world_size ", ws,
              " but rank 0 has ", got, "; every rank needs the same WORLD_SIZE");
  std::vector<std::string> keys;
  for (int r = 0; r < world_size; ++r) keys.push_back("joined/" + std::to_string(r));
  // Rank 0 hosts the store and names the missing ranks when it gives up; the others wait a second
  // longer, so that they learn of it from the store going away instead of racing rank 0.
  const milliseconds patience = rank == 0 ? timeout : timeout + std::chrono::seconds(1);
  const auto start = std::chrono::steady_clock::now();
  try {
    store.wait(keys, patience);
  } catch (const DistributedError& e) {
    if (std::chrono::steady_clock::now() - start < patience - milliseconds(100)) {
      // Not our timeout: the store went away (rank 0, its host, gave up or exited).
      throw DistributedError(ember::detail::str_cat(
          "[init_process_group] rank ", rank, " of ", world_size, ": the rendezvous at ", where,
          " ended before every rank joined (", e.what(),
          "); rank 0, which hosts the store, may have timed out waiting for a missing rank, or "
          "exited"));
    }
    std::string missing;
    try {
      for (int r = 0; r < world_size; ++r)
        if (!store.check({keys[static_cast<size_t>(r)]}))
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    } catch (const DistributedError&) {
      missing.clear();  // the store left meanwhile: the ranks cannot be named
    }
    throw DistributedError(ember::detail::str_cat(
        "[init_process_group] rank ", rank, " of ", world_size, ": timed out after ",
        static_cast<double>(timeout.count()) / 1000.0, " s waiting for rank(s) ",
        missing.empty() ? std::string("?") : missing, " to join at ", where,
        "; did every rank start, with the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE?"));
  }
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "SUM";
    case ReduceOp::AVG:
      return "AVG";
    case ReduceOp::PRODUCT:
      return "PRODUCT";
    case ReduceOp::MIN:
      return "MIN";
    case ReduceOp::MAX:
      return "MAX";
    case ReduceOp::BAND:
      return "BAND";
    case ReduceOp::BOR:
      return "BOR";
    case ReduceOp::BXOR:
      return "BXOR";
  }
  return "?";
}

bool is_gloo_available() {
#ifdef EMBER_HAVE_GLOO
  return true;
#else
  return false;
#endif
}
bool is_nccl_available() {
#ifdef EMBER_HAVE_NCCL
  return true;
#else
  return false;
#endif
}
bool is_available() {
  return is_gloo_available() || is_nccl_available();
}

void init_process_group(const InitOptions& options) {
  std::lock_guard lock(state_mutex());
  State& s = state();
  EMBER_CHECK(!s.world,
              "[init_process_group] the default process group is already initialized; "
              "call destroy_process_group() first");
  std::string backend = resolve_backend(options.backend);
  milliseconds timeout = options.timeout.value_or(default_timeout());
  int rank = env_int("RANK", options.rank, "rank");
  int world_size = env_int("WORLD_SIZE", options.world_size, "world_size");
  EMBER_CHECK(world_size >= 1 && rank < world_size, "[init_process_group] rank ", rank,
              " is out of range for world_size ", world_size);

  const std::string& method = options.init_method;
  std::string where;
  std::shared_ptr<Store> store;
  std::string local_address;
  if (method.rfind("file://", 0) == 0) {
    s.file_path = method.substr(7);
    EMBER_CHECK(!s.file_path.empty(), "[init_process_group] init_method '", method,
                "' names no file; use file:///path/to/file");
    store = make_file_store(s.file_path, timeout);
    where = "file " + s.file_path;
  } else {
    std::string host;
    std::string port_text;
    if (method == "env://") {
      host = env_or("MASTER_ADDR", "");
      port_text = env_or("MASTER_PORT", "");
      EMBER_CHECK(!host.empty() && !port_text.empty(),
                  "[init_process_group] env:// needs MASTER_ADDR and MASTER_PORT (unset "
                  "here); start the program with `ember run` (or torchrun), or set them");
    } else if (method.rfind("tcp://", 0) == 0) {
      std::string rest = method.substr(6);
      auto colon = rest.rfind(':');
      EMBER_CHECK(colon != std::string::npos && colon > 0, "[init_process_group] '", method,
                  "' is not tcp://HOST:PORT");
      host = rest.substr(0, colon);
      if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
      port_text = rest.substr(colon + 1);
    } else {
      EMBER_CHECK(false, "[init_process_group] unknown init_method '", method,
                  "'; use env://, tcp://HOST:PORT or file:///path");
    }
    char* end = nullptr;
    long port = std::strtol(port_text.c_str(), &end, 10);
    EMBER_CHECK(end && *end == 0 && port > 0 && port < 65536, "[init_process_group] port '",
                port_text, "' is not a TCP port (1-65535)");
    store = make_tcp_store(host, static_cast<int>(port), rank == 0, timeout);
    local_address = tcp_store_local_address(*store);
    where = host + ":" + port_text;
  }
  if (local_address.empty()) local_address = host_name();
  rendezvous(*store, rank, world_size, timeout, where);

  detail::GroupSpec spec;
  spec.rank = rank;
  spec.size = world_size;
  for (int r = 0; r < world_size; ++r) spec.global_ranks.push_back(r);
  spec.timeout = timeout;
  spec.local_address = local_address;
  s.world = make_group(backend, spec, "group/0", store);
  s.store = store;
  s.backend = backend;
  s.local_address = local_address;
  s.groups_made = 1;
}

bool is_initialized() {
  std::lock_guard lock(state_mutex());
  return state().world != nullptr;
}

void destroy_process_group() {
  std::lock_guard lock(state_mutex());
  State& s = state();
  if (!s.world) return;
  int world_size = s.world->size();
  s.world.reset();
  if (!s.file_path.empty()) {
    try {
      if (s.store->add("left", 1) == world_size) ::unlink(s.file_path.c_str());
    } catch (const Error&) {
    }
  }
  s = State();
}

std::shared_ptr<ProcessGroup> default_group() {
  std::lock_guard lock(state_mutex());
  EMBER_CHECK(state().world != nullptr,
              "[distributed] the default process group is not initialized; call "
              "ember::distributed::init_process_group() first");
  return state().world;
}

int get_rank(const ProcessGroup* group) {
  if (group) return group->rank();
  return default_group()->rank();
}
int get_world_size(const ProcessGroup* group) {
  if (group) return group->size();
  return default_group()->size();
}
std::string get_backend(const ProcessGroup* group) {
  if (group) return group->backend_name();
  return default_group()->backend_name();
}

std::shared_ptr<ProcessGroup> new_group(std::vector<int> ranks, const std::string& backend) {
  std::lock_guard lock(state_mutex());
  State& s = state();
  EMBER_CHECK(s.world != nullptr,
              "[new_group] the default process group is not initialized; call "
              "init_process_group() first");
  int world = s.world->size();
  if (ranks.empty())
    for (int r = 0; r < world; ++r) ranks.push_back(r);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  for (int r : ranks)
    EMBER_CHECK(r >= 0 && r < world, "[new_group] rank ", r, " is out of range for the world size ",
                world);
  int id = s.groups_made++;
  int me = s.world->rank();
  auto it = std::find(ranks.begin(), ranks.end(), me);
  if (it == ranks.end()) return nullptr;
  detail::GroupSpec spec;
  spec.rank = static_cast<int>(it - ranks.begin());
  spec.size = static_cast<int>(ranks.size());
  spec.global_ranks = ranks;
  spec.timeout = s.world->timeout();
  spec.local_address = s.local_address;
  std::string b = backend.empty() ? s.backend : resolve_backend(backend);
  return make_group(b, spec, "group/" + std::to_string(id), s.store);
}

}  // namespace ember::distributed
