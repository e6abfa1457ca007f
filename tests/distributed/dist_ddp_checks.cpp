// tests/distributed/dist_ddp_checks.cpp: DistributedDataParallel scenarios of ember_dist_worker.
// Every rank knows every rank's data (drawn from fixed seeds), so each computes the
// single-process reference itself and compares its DDP model with it:
// - the MLP: W ranks with batch B each train as one process with batch W*B;
// - the CNN with BatchNorm: as one process whose gradient is the mean of the W per-rank batch
//   gradients (each rank normalizes with its own batch's statistics), with running statistics
//   following rank 0's batches (broadcast_buffers);
// - no_sync accumulation of K micro-batches equals one step over all of them;
// - gradient_as_bucket_view, tiny buckets (many of them), float32 and float64 give the same;
// - find_unused_parameters: parameters no rank used keep no gradient, one used on rank 0 only
//   gets rank 0's gradient / W; without it an unused parameter is a clear error;
// - modules that differ across ranks are refused at construction, naming the parameter;
// - rank 0's initial parameters and buffers reach every rank; state_dict names.
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <iostream>

#include "dist_checks.h"
#include "ember/ember.h"

namespace ember::dist_test {
namespace {

namespace dist = ember::distributed;
using nn::parallel::DistributedDataParallel;
using nn::parallel::DistributedDataParallelOptions;

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.detach().cpu().to(kFloat64) - b.detach().cpu().to(kFloat64)).abs().max().item<double>();
}

// The largest difference between two modules' parameters (and buffers with `buffers`).
double state_diff(nn::Module& a, nn::Module& b, bool buffers = true) {
  auto sa = buffers ? a.state_dict() : a.named_parameters();
  auto sb = buffers ? b.state_dict() : b.named_parameters();
  double worst = 0;
  for (size_t i = 0; i < sa.size() && i < sb.size(); ++i)
    worst = std::max(worst, max_abs_diff(sa[i].second, sb[i].second));
  return sa.size() == sb.size() ? worst : INFINITY;
}

nn::Sequential make_mlp() {
  return nn::Sequential(nn::Linear(12, 16), nn::Tanh(), nn::Linear(16, 16), nn::ReLU(),
                        nn::Linear(16, 5));
}

nn::Sequential make_cnn() {
  return nn::Sequential(nn::Conv2d(1, 4, 3), nn::BatchNorm2d(4), nn::ReLU(), nn::Flatten(),
                        nn::Linear(4 * 6 * 6, 5));
}

// Step `step`'s global batch of W * B examples: inputs shaped (W*B, in...), targets in [0, 5).
struct Batch {
  Tensor x, y;
};
Batch global_batch(int step, int64_t rows, const Shape& in, DType dtype, Device device) {
  Generator gen(1000 + static_cast<uint64_t>(step));
  Shape shape{rows};
  for (int64_t s : in) shape.push_back(s);
  Tensor x = randn(shape, {.dtype = dtype}, &gen);
  Tensor y = randint(0, 5, {rows}, {}, &gen);
  return {x.to(device), y.to(device)};
}

// MLP or CNN: W ranks with B each, against one process with W*B (the CNN's reference averages
// per-rank gradients and keeps rank 0's running statistics).
void ddp_matches_reference(const char* what, bool cnn, DType dtype, Device device,
                           const DistributedDataParallelOptions& options, int steps = 4) {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const int64_t B = 3;
  const Shape in = cnn ? Shape{1, 8, 8} : Shape{12};
  manual_seed(100 + static_cast<uint64_t>(rank));  // each rank starts differently...
  nn::Sequential local = cnn ? make_cnn() : make_mlp();
  local->to(device, dtype);
  DistributedDataParallel ddp(local.ptr(), options);  // ...and gets rank 0's weights
  manual_seed(100);
  nn::Sequential ref = cnn ? make_cnn() : make_mlp();
  ref->to(device, dtype);
  check(state_diff(*local, *ref) == 0,
        std::string(what) + ": rank 0's initial state reached rank " + std::to_string(rank));
  optim::SGD opt(local->parameters(), {.lr = 0.1, .momentum = 0.9});
  optim::SGD ref_opt(ref->parameters(), {.lr = 0.1, .momentum = 0.9});
  const double tol = dtype == kFloat64 ? 1e-12 : 2e-5;
  for (int step = 0; step < steps; ++step) {
    Batch g = global_batch(step, world * B, in, dtype, device);
    Tensor x = g.x.narrow(0, rank * B, B), y = g.y.narrow(0, rank * B, B);
    opt.zero_grad();
    nn::F::cross_entropy(ddp(x), y).backward();
    ref_opt.zero_grad();
    if (!cnn) {
      nn::F::cross_entropy(ref->forward(g.x), g.y).backward();
    } else {
      // Each rank's batch with its own statistics; the buffers end as rank 0's batch leaves them.
      std::vector<Tensor> before;
      for (const Tensor& b : ref->buffers()) before.push_back(b.clone());
      for (int r = world - 1; r >= 0; --r) {
        if (r == 0) {
          NoGradGuard no_grad;
          auto buffers = ref->buffers();
          for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(before[i]);
        }
        Tensor loss =
            nn::F::cross_entropy(ref->forward(g.x.narrow(0, r * B, B)), g.y.narrow(0, r * B, B));
        (loss / static_cast<double>(world)).backward();
      }
    }
    double grad_diff = 0;
    auto p = local->parameters(), q = ref->parameters();
    for (size_t i = 0; i < p.size(); ++i)
      grad_diff = std::max(grad_diff, max_abs_diff(p[i].grad(), q[i].grad()));
    check(grad_diff <= tol, std::string(what) + ": gradients at step " + std::to_string(step) +
                                " differ from the reference by " + std::to_string(grad_diff));
    opt.step();
    ref_opt.step();
  }
  double diff = state_diff(*local, *ref, false);
  check(diff <= tol * 10,
        std::string(what) + ": parameters after training differ by " + std::to_string(diff));
  // Running statistics follow rank 0's batches: rank 0's are the reference's (the other ranks'
  // get rank 0's at their next training forward).
  if (rank == 0)
    check(state_diff(*local, *ref) <= tol * 10, std::string(what) + ": buffers on rank 0");
  check(ddp->last_stats().buckets ==
            (world > 1 ? static_cast<int64_t>(ddp->bucket_indices().size()) : 0),
        std::string(what) + ": every bucket was all-reduced");
}

// K micro-batches under no_sync, then one synchronized: the gradients of one big step.
void no_sync_accumulates(Device device) {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const int64_t B = 2;
  const int K = 3;
  manual_seed(7);
  nn::Sequential local = make_mlp();
  local->to(device, kFloat64);
  DistributedDataParallel ddp(local.ptr());
  manual_seed(7);
  nn::Sequential ref = make_mlp();
  ref->to(device, kFloat64);
  std::vector<Batch> micro;
  for (int k = 0; k < K; ++k)
    micro.push_back(global_batch(50 + k, world * B, {12}, kFloat64, device));
  {
    auto guard = ddp->no_sync();
    for (int k = 0; k < K - 1; ++k)
      (nn::F::cross_entropy(ddp(micro[k].x.narrow(0, rank * B, B)),
                            micro[k].y.narrow(0, rank * B, B)) /
       static_cast<double>(K))
          .backward();
  }
  (nn::F::cross_entropy(ddp(micro[K - 1].x.narrow(0, rank * B, B)),
                        micro[K - 1].y.narrow(0, rank * B, B)) /
   static_cast<double>(K))
      .backward();
  Tensor x = cat({micro[0].x, micro[1].x, micro[2].x}),
         y = cat({micro[0].y, micro[1].y, micro[2].y});
  nn::F::cross_entropy(ref->forward(x), y).backward();
  auto p = local->parameters(), q = ref->parameters();
  double worst = 0;
  for (size_t i = 0; i < p.size(); ++i)
    worst = std::max(worst, max_abs_diff(p[i].grad(), q[i].grad()));
  check(worst < 1e-12,
        "no_sync: accumulated gradients differ from one large step by " + std::to_string(worst));
}

// A model whose second head is used on rank 0 only and whose third head is never used.
class TwoHeadsImpl : public nn::Module {
 public:
  TwoHeadsImpl() : Module("TwoHeads") {
    trunk = register_module("trunk", nn::Linear(4, 4).ptr());
    head_a = register_module("head_a", nn::Linear(4, 2).ptr());
    head_b = register_module("head_b", nn::Linear(4, 2).ptr());
    head_c = register_module("head_c", nn::Linear(4, 2).ptr());
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = trunk->forward(x);
    Tensor out = head_a->forward(h);
    if (use_b) out = out + head_b->forward(h);
    return out;
  }
  std::shared_ptr<nn::LinearImpl> trunk, head_a, head_b, head_c;
  bool use_b = false;
};

void unused_parameters(Device device) {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  manual_seed(3);
  auto model = std::make_shared<TwoHeadsImpl>();
  model->to(device, kFloat64);
  model->use_b = rank == 0;
  DistributedDataParallel ddp(model, {.find_unused_parameters = true});
  Tensor x = full({2, 4}, 0.5, {.dtype = kFloat64, .device = device});
  ddp(x).sum().backward();
  check(!model->head_c->weight.grad().defined(),
        "find_unused_parameters: a parameter no rank used keeps no gradient");
  check(model->head_a->weight.grad().defined() && model->head_b->weight.grad().defined(),
        "find_unused_parameters: used parameters get gradients");
  // head_b's gradient: rank 0's (x's rows summed through the trunk), divided by W, on every rank.
  manual_seed(3);
  auto ref = std::make_shared<TwoHeadsImpl>();
  ref->to(device, kFloat64);
  ref->use_b = true;
  ref->forward(x).sum().backward();
  check(max_abs_diff(model->head_b->weight.grad(), ref->head_b->weight.grad() / world) < 1e-12,
        "find_unused_parameters: a parameter used on rank 0 only gets rank 0's gradient / W");
  check(max_abs_diff(model->head_a->weight.grad(), ref->head_a->weight.grad()) < 1e-12,
        "find_unused_parameters: parameters every rank used get the mean gradient");
  // A second iteration in a row works the same.
  model->zero_grad();
  ddp(x).sum().backward();
  check(!model->head_c->weight.grad().defined(), "find_unused_parameters: second iteration");

  // Without find_unused_parameters the unused head is an error naming it, on every rank.
  manual_seed(3);
  auto strict = std::make_shared<TwoHeadsImpl>();
  strict->to(device, kFloat64);
  strict->use_b = true;
  DistributedDataParallel ddp_strict(strict);
  try {
    ddp_strict(x).sum().backward();
    check(false, "an unused parameter without find_unused_parameters did not throw");
  } catch (const Error& e) {
    check(std::strstr(e.what(), "head_c.weight") && std::strstr(e.what(), "find_unused_parameters"),
          std::string("the unused-parameter error names it and the option: ") + e.what());
  }
  // The next iteration is clean (the error left no collective behind).
  Tensor loss = ddp_strict->forward_with(
      [&] { return strict->forward(x).sum() + strict->head_c->forward(x).sum(); });
  loss.backward();
  check(strict->head_c->weight.grad().defined(), "after the error, a full iteration reduces");
}

// Rank 1 wraps a differently shaped model: every rank is told which parameter differs.
void mismatched_modules(Device device) {
  const int rank = dist::get_rank();
  if (dist::get_world_size() == 1) return;
  nn::Sequential model = rank == 1 ? nn::Sequential(nn::Linear(12, 17), nn::Linear(17, 5))
                                   : nn::Sequential(nn::Linear(12, 16), nn::Linear(16, 5));
  model->to(device);
  try {
    DistributedDataParallel ddp(model.ptr());
    check(false, "modules of different shapes were accepted");
  } catch (const Error& e) {
    check(std::strstr(e.what(), "'0.weight'") && std::strstr(e.what(), "[17, 12]") &&
              std::strstr(e.what(), "[16, 12]"),
          std::string("the mismatch error names the parameter and both shapes: ") + e.what());
  }
}

void state_dict_names(Device device) {
  nn::Sequential model = make_cnn();
  model->to(device);
  DistributedDataParallel ddp(model.ptr());
  auto names = ddp->state_dict();
  check(!names.empty() && names.front().first == "module.0.weight",
        "DDP's state_dict names are 'module.' + the module's");
  check(ddp->module().state_dict().front().first == "0.weight", "module() has the model's names");
}

}  // namespace

int run_ddp_checks(Device device) {
  ddp_matches_reference("mlp float64", false, kFloat64, device, {});
  ddp_matches_reference("mlp float32", false, kFloat32, device, {});
  ddp_matches_reference("mlp bucket view", false, kFloat64, device,
                        {.gradient_as_bucket_view = true});
  ddp_matches_reference("mlp tiny buckets", false, kFloat64, device, {.bucket_cap_mb = 0.0005});
  ddp_matches_reference("cnn batchnorm float64", true, kFloat64, device, {});
  ddp_matches_reference("cnn batchnorm tiny buckets view", true, kFloat64, device,
                        {.bucket_cap_mb = 0.0002, .gradient_as_bucket_view = true});
  no_sync_accumulates(device);
  unused_parameters(device);
  mismatched_modules(device);
  state_dict_names(device);
  return 0;
}

int run_ddp_rank_killed() {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  manual_seed(0);
  nn::Sequential model = make_mlp();
  DistributedDataParallel ddp(model.ptr());
  optim::SGD opt(model->parameters(), {.lr = 0.01});
  try {
    for (int step = 0; step < 1000; ++step) {
      if (rank == 1 && step == 5) ::kill(::getpid(), SIGKILL);
      Batch g = global_batch(step, world * 4, {12}, kFloat32, Device("cpu"));
      opt.zero_grad();
      nn::F::cross_entropy(ddp(g.x.narrow(0, rank * 4, 4)), g.y.narrow(0, rank * 4, 4)).backward();
      opt.step();
    }
    check(false, "training went on after rank 1 died");
  } catch (const dist::DistributedError& e) {
    std::cerr << "caught: " << e.what() << "\n";
    check(std::strstr(e.what(), "all_reduce") != nullptr, "the error names the collective");
  }
  // The group is unusable now; leave without destroying it (as a real job would exit).
  std::_Exit(failures ? 1 : 0);
}

}  // namespace ember::dist_test
