// tests/distributed/dist_worker.cpp: one rank of a distributed test (ember_dist_worker SCENARIO
// [INIT_METHOD]): started by test_distributed.cpp with torchrun's environment, it runs a scenario
// against the other ranks and checks the results it can compute itself (every rank's inputs are
// known functions of the rank). Exit 0 when every check passed; each failure is printed on
// stderr. Scenarios whose name contains "fake_cuda" run on a stand-in "cuda" device (host
// memory) when no GPU is present.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>

#include "dist_checks.h"
#include "ember/distributed.h"
#include "ember/ember.h"
#include "fake_cuda_backend.h"

namespace dist = ember::distributed;
using ember::Tensor;

namespace ember::dist_test {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::cerr << "FAIL rank " << (dist::is_initialized() ? dist::get_rank() : -1) << ": " << what
              << "\n";
  }
}

namespace {

constexpr dist::ReduceOp kOps[] = {
    dist::ReduceOp::SUM, dist::ReduceOp::AVG,  dist::ReduceOp::PRODUCT, dist::ReduceOp::MIN,
    dist::ReduceOp::MAX, dist::ReduceOp::BAND, dist::ReduceOp::BOR,     dist::ReduceOp::BXOR};

bool bitwise(dist::ReduceOp op) {
  return op == dist::ReduceOp::BAND || op == dist::ReduceOp::BOR || op == dist::ReduceOp::BXOR;
}

bool applicable(DType dtype, dist::ReduceOp op) {
  if (op == dist::ReduceOp::AVG) return is_floating_point(dtype);
  if (bitwise(op)) return !is_floating_point(dtype);
  return true;
}

// Rank r's value at element i for op: small integers, exact in every dtype.
double input_value(DType dtype, dist::ReduceOp op, int r, int64_t i) {
  if (dtype == kBool) return ((i + r) % 3) == 0 ? 1 : 0;
  if (op == dist::ReduceOp::PRODUCT) return 1 + ((i + r) % 2);
  if (bitwise(op)) return static_cast<double>((i * 5 + r * 3) % 16);
  return static_cast<double>((i * 7 + r * 3) % 11);
}

double combine(DType dtype, dist::ReduceOp op, double a, double b) {
  auto ia = static_cast<int64_t>(a), ib = static_cast<int64_t>(b);
  switch (op) {
    case dist::ReduceOp::SUM:
    case dist::ReduceOp::AVG:
      return dtype == kBool ? static_cast<double>(ia || ib) : a + b;
    case dist::ReduceOp::PRODUCT:
      return a * b;
    case dist::ReduceOp::MIN:
      return std::min(a, b);
    case dist::ReduceOp::MAX:
      return std::max(a, b);
    case dist::ReduceOp::BAND:
      return static_cast<double>(ia & ib);
    case dist::ReduceOp::BOR:
      return static_cast<double>(ia | ib);
    case dist::ReduceOp::BXOR:
      return static_cast<double>(ia ^ ib);
  }
  return 0;
}

Tensor make_input(DType dtype, dist::ReduceOp op, int r, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = input_value(dtype, op, r, i);
  return from_vector(v).to(dtype);
}

std::vector<double> expected_reduction(DType dtype, dist::ReduceOp op, int world, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double acc = input_value(dtype, op, 0, i);
    for (int r = 1; r < world; ++r) acc = combine(dtype, op, acc, input_value(dtype, op, r, i));
    if (op == dist::ReduceOp::AVG) acc /= world;
    out[static_cast<size_t>(i)] = acc;
  }
  return out;
}

std::vector<double> values(const Tensor& t) {
  return t.to(Device("cpu")).to(kFloat64).contiguous().to_vector<double>();
}

bool close(const std::vector<double>& a, const std::vector<double>& b, DType dtype) {
  if (a.size() != b.size()) return false;
  double tol = element_size(dtype) == 2 ? 1e-2 : 1e-6;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > tol * std::max(1.0, std::abs(b[i]))) return false;
  return true;
}

std::string label(const char* op, DType dtype, const std::string& extra = "") {
  return std::string(op) + " " + dtype_name(dtype) + (extra.empty() ? "" : " " + extra);
}

// Every collective, every dtype, every applicable reduce op, sync and async, contiguous or not.
void collectives(Device device) {
  int rank = dist::get_rank(), world = dist::get_world_size();
  const int64_t n = 37;
  for (DType dtype : kAllDTypes) {
    for (bool async_op : {false, true}) {
      std::string mode = async_op ? "async" : "sync";
      for (dist::ReduceOp op : kOps) {
        if (!applicable(dtype, op)) continue;
        Tensor t = make_input(dtype, op, rank, n).to(device);
        auto work = dist::all_reduce(t, op, nullptr, async_op);
        work->wait();
        check(work->is_completed(), label("all_reduce", dtype, mode + " is_completed"));
        check(close(values(t), expected_reduction(dtype, op, world, n), dtype),
              label("all_reduce", dtype, std::string(dist::reduce_op_name(op)) + " " + mode));
        // reduce to the last rank: the others keep their input.
        Tensor u = make_input(dtype, op, rank, n).to(device);
        dist::reduce(u, world - 1, op, nullptr, async_op)->wait();
        check(close(values(u),
                    rank == world - 1 ? expected_reduction(dtype, op, world, n)
                                      : values(make_input(dtype, op, rank, n)),
                    dtype),
              label("reduce", dtype, dist::reduce_op_name(op)));
        // reduce_scatter_tensor: rank r gets chunk r of the reduction.
        const int64_t chunk = 5;
        Tensor in = make_input(dtype, op, rank, chunk * world).to(device);
        Tensor out = zeros({chunk}, {.dtype = dtype, .device = device});
        dist::reduce_scatter_tensor(out, in, op, nullptr, async_op)->wait();
        auto full = expected_reduction(dtype, op, world, chunk * world);
        std::vector<double> mine(full.begin() + rank * chunk, full.begin() + (rank + 1) * chunk);
        check(close(values(out), mine, dtype),
              label("reduce_scatter_tensor", dtype, dist::reduce_op_name(op)));
      }
      // broadcast from every src.
      for (int src = 0; src < world; ++src) {
        Tensor t = make_input(dtype, dist::ReduceOp::MAX, rank, n).to(device);
        dist::broadcast(t, src, nullptr, async_op)->wait();
        check(close(values(t), values(make_input(dtype, dist::ReduceOp::MAX, src, n)), dtype),
              label("broadcast", dtype, "src " + std::to_string(src) + " " + mode));
      }
      // all_gather (list) and all_gather_into_tensor.
      Tensor mine = make_input(dtype, dist::ReduceOp::MAX, rank, 6).reshape({2, 3}).to(device);
      std::vector<Tensor> list;
      for (int r = 0; r < world; ++r)
        list.push_back(zeros({2, 3}, {.dtype = dtype, .device = device}));
      dist::all_gather(list, mine, nullptr, async_op)->wait();
      Tensor flat = zeros({world * 2, 3}, {.dtype = dtype, .device = device});
      dist::all_gather_into_tensor(flat, mine, nullptr, async_op)->wait();
      for (int r = 0; r < world; ++r) {
        auto want = values(make_input(dtype, dist::ReduceOp::MAX, r, 6));
        check(close(values(list[static_cast<size_t>(r)]), want, dtype),
              label("all_gather", dtype, "row " + std::to_string(r)));
        check(close(values(flat.narrow(0, 2 * r, 2)), want, dtype),
              label("all_gather_into_tensor", dtype, "row " + std::to_string(r)));
      }
      // gather to rank 0, scatter from the last rank.
      std::vector<Tensor> gathered;
      if (rank == 0)
        for (int r = 0; r < world; ++r)
          gathered.push_back(zeros({2, 3}, {.dtype = dtype, .device = device}));
      dist::gather(mine, gathered, 0, nullptr, async_op)->wait();
      for (size_t r = 0; r < gathered.size(); ++r)
        check(close(values(gathered[r]),
                    values(make_input(dtype, dist::ReduceOp::MAX, static_cast<int>(r), 6)), dtype),
              label("gather", dtype, "row " + std::to_string(r)));
      std::vector<Tensor> pieces;
      if (rank == world - 1)
        for (int r = 0; r < world; ++r)
          pieces.push_back(make_input(dtype, dist::ReduceOp::MAX, r + 10, 4).to(device));
      Tensor piece = zeros({4}, {.dtype = dtype, .device = device});
      dist::scatter(piece, pieces, world - 1, nullptr, async_op)->wait();
      check(
          close(values(piece), values(make_input(dtype, dist::ReduceOp::MAX, rank + 10, 4)), dtype),
          label("scatter", dtype));
    }
    // A non-contiguous tensor (a transposed view) is reduced in place through a staging copy.
    Tensor base = make_input(dtype, dist::ReduceOp::MAX, rank, 12).reshape({3, 4}).to(device);
    Tensor view = base.transpose(0, 1);
    dist::all_reduce(view, dist::ReduceOp::MAX);
    auto want = expected_reduction(dtype, dist::ReduceOp::MAX, world, 12);
    check(close(values(base), want, dtype), label("all_reduce", dtype, "non-contiguous view"));
  }
  // Point to point: a ring, each rank sending to the next one.
  Tensor out = full({8}, rank, {.dtype = kFloat32, .device = device});
  Tensor in = zeros({8}, {.dtype = kFloat32, .device = device});
  int next = (rank + 1) % world, prev = (rank + world - 1) % world;
  auto s = dist::isend(out, next, nullptr, 3);
  auto r = dist::irecv(in, prev, nullptr, 3);
  s->wait();
  r->wait();
  check(values(in) == std::vector<double>(8, prev), "send/recv ring");
  dist::barrier();
}

// new_group of the even ranks: a collective inside it, nullptr on the others.
void groups() {
  int rank = dist::get_rank(), world = dist::get_world_size();
  std::vector<int> evens;
  for (int r = 0; r < world; r += 2) evens.push_back(r);
  auto g = dist::new_group(evens);
  check((g != nullptr) == (rank % 2 == 0), "new_group membership");
  if (g) {
    check(dist::get_rank(g.get()) == rank / 2, "new_group rank");
    check(dist::get_world_size(g.get()) == static_cast<int>(evens.size()), "new_group size");
    Tensor t = full({3}, rank, {.dtype = kInt64});
    dist::all_reduce(t, dist::ReduceOp::SUM, g.get());
    int64_t want = 0;
    for (int r : evens) want += r;
    check(values(t) == std::vector<double>(3, static_cast<double>(want)), "new_group all_reduce");
  }
  dist::barrier();
}

int scenario(const std::string& name) {
  if (name == "collectives") {
    collectives(Device("cpu"));
    groups();
  } else if (name == "collectives_fake_cuda") {
    collectives(Device("cuda:0"));
  } else if (name == "rank_exits") {
    // Rank 1 dies after the first collective; the others must fail the second one, not hang.
    Tensor t = ones({4});
    dist::all_reduce(t);
    if (dist::get_rank() == 1) std::_Exit(9);
    try {
      for (int i = 0; i < 3; ++i) dist::all_reduce(t);
      check(false, "all_reduce with a dead peer did not throw");
    } catch (const dist::DistributedError& e) {
      std::cerr << "caught: " << e.what() << "\n";
      check(std::strstr(e.what(), "all_reduce") != nullptr, "the error names the collective");
      std::string me = "rank " + std::to_string(dist::get_rank()) + " of ";
      check(std::strstr(e.what(), me.c_str()) != nullptr, "the error names this rank");
    }
  } else if (name == "rank_stalls") {
    // Rank 1 stalls past the timeout; rank 0's collective fails within the timeout.
    Tensor t = ones({4});
    if (dist::get_rank() == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(6));
      return 0;
    }
    try {
      dist::all_reduce(t);
      check(false, "all_reduce with a stalled peer did not throw");
    } catch (const dist::DistributedError& e) {
      std::cerr << "caught: " << e.what() << "\n";
      check(std::strstr(e.what(), "timeout") != nullptr, "the error names the timeout");
    }
    std::_Exit(failures ? 1 : 0);
  } else if (name == "mismatch") {
    dist::debug_detail_override() = true;
    Tensor t = ones({dist::get_rank() == 0 ? 4 : 5});
    try {
      dist::all_reduce(t);
      check(false, "mismatched shapes were not detected");
    } catch (const dist::DistributedError& e) {
      std::cerr << "caught: " << e.what() << "\n";
      check(std::strstr(e.what(), "[4]") && std::strstr(e.what(), "[5]"),
            "the error shows both shapes");
    }
  } else if (name == "ddp") {
    return run_ddp_checks(Device("cpu"));
  } else if (name == "ddp_fake_cuda") {
    return run_ddp_checks(Device("cuda:0"));
  } else if (name == "ddp_rank_killed") {
    return run_ddp_rank_killed();
  } else if (name == "rendezvous") {
    check(dist::is_initialized(), "is_initialized after init_process_group");
    dist::barrier();
  } else {
    std::cerr << "unknown scenario " << name << "\n";
    return 2;
  }
  return 0;
}

}  // namespace
}  // namespace ember::dist_test

int main(int argc, char** argv) {
  using namespace ember::dist_test;
  if (std::strstr(argv[argc > 1 ? 1 : 0], "fake_cuda"))
    ember::testing::register_fake_cuda_backend();
  if (argc < 2) {
    std::cerr << "usage: ember_dist_worker SCENARIO [INIT_METHOD]\n";
    return 2;
  }
  std::string name = argv[1];
  dist::InitOptions options;
  options.backend = "gloo";
  if (argc > 2) options.init_method = argv[2];
  const char* t = std::getenv("EMBER_TEST_TIMEOUT_S");
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>((t ? std::atof(t) : 30) * 1000));
  try {
    dist::init_process_group(options);
    int rc = scenario(name);
    dist::destroy_process_group();
    if (rc != 0) return rc;
  } catch (const std::exception& e) {
    std::cerr << "ERROR: " << e.what() << "\n";
    return 3;
  }
  return failures == 0 ? 0 : 1;
}
