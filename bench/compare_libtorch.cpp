// bench/compare_libtorch.cpp: runs the same workloads in ember and LibTorch in one process and
// prints one table -- median time per iteration in each library, their ratio and throughput.
// Both libraries get the same thread count. The training steps run with autograd in both; the
// forward-only workloads run LibTorch under InferenceMode (its cheapest dispatch path; ember's
// inputs do not require grad). Repeats of the two libraries alternate so that noise on a shared
// machine hits both alike. The only TU that includes Torch headers.
//
// Usage: ember_vs_libtorch [--threads N] [--repeats R] [--only KEYS]
//   defaults: hardware threads, 7 repeats, every workload; KEYS is a comma-separated list of
//   workload keys (train, mlp, cnn, gru, epoch, grad, tiny, sgemm, halfgemm, peak, add, chain, sum,
//   cumsum, sort, softmax).
#include <torch/torch.h>

#include <sys/resource.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "chain10.h"
#include "ember/ember.h"
#include "fma_peak.h"
#include "memcpy_limit.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kLarge = int64_t{32} << 20;  // 32M floats, 128 MiB per tensor

struct Options {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int repeats = 7;
  std::vector<std::string> only;  // workload keys to run; empty: all
};

// Whether the workload with this key runs.
bool want(const Options& o, const char* key) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), key) != o.only.end();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Seconds per call of f over `iters` calls, one sample.
double time_once(const std::function<void()>& f, int iters) {
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) f();
  return std::chrono::duration<double>(Clock::now() - t0).count() / iters;
}

struct Medians {
  double ember, torch;
};

// Warms both up, then alternates `repeats` samples of `iters` calls each; medians per call.
Medians measure(const std::function<void()>& fe, const std::function<void()>& ft, int iters,
                int repeats) {
  int warm = std::max(1, iters / 10);
  time_once(fe, warm);
  time_once(ft, warm);
  std::vector<double> te, tt;
  for (int r = 0; r < repeats; ++r) {
    te.push_back(time_once(fe, iters));
    tt.push_back(time_once(ft, iters));
  }
  return {median(te), median(tt)};
}

// A LibTorch copy of an ember float32 tensor (same values, so both compute the same thing).
torch::Tensor to_torch(const ember::Tensor& t) {
  ember::Tensor c = t.contiguous();
  return torch::from_blob(c.raw_data_ptr(), c.sizes(), torch::kFloat32).clone();
}

// Throws away the run when the two libraries disagree: the table would compare different work.
void check_close(const char* what, const ember::Tensor& e, const torch::Tensor& t, double rtol,
                 double atol) {
  torch::Tensor et = to_torch(e);
  if (et.sizes() != t.sizes() || !torch::allclose(et, t, rtol, atol)) {
    std::fprintf(stderr, "ember_vs_libtorch: results differ for %s\n", what);
    std::exit(1);
  }
}

// The same for the parameters after one training step, where a few elements may legitimately
// differ: a ReLU input or two max-pool candidates within rounding of each other can go either way
// in the two libraries, and Adam's first step then moves that weight by about lr in one of them
// and not the other. At most `max_fraction` of the elements may be outside the tolerance.
void check_mostly_close(const char* what, const ember::Tensor& e, const torch::Tensor& t,
                        double rtol, double atol, double max_fraction) {
  torch::Tensor et = to_torch(e);
  if (et.sizes() != t.sizes()) check_close(what, e, t, rtol, atol);
  torch::Tensor off = (et - t).abs() > (t.abs() * rtol + atol);
  if (off.sum().item<int64_t>() > max_fraction * static_cast<double>(t.numel())) {
    std::fprintf(stderr, "ember_vs_libtorch: results differ for %s\n", what);
    std::exit(1);
  }
}

using ember_bench::chain10;

// "812 ns", "3.41 us", "27.9 ms": a per-iteration time in a readable unit.
std::string format_time(double s) {
  char buf[32];
  if (s < 1e-6)
    std::snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
  else if (s < 1e-3)
    std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  return buf;
}

// One table row. work: FLOP or bytes per iteration (0: none), unit: "GFLOP/s" or "GB/s".
struct Row {
  std::string name;
  double ember_s, torch_s;  // torch_s < 0: measured once, not per library
  double work = 0;
  const char* unit = "";
};

std::string format_rate(double work, double s, const char* unit) {
  if (work <= 0 || s <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", work / s / 1e9, unit);
  return buf;
}

void print_table(const std::vector<Row>& rows) {
  std::printf("\n%-32s %12s %12s %9s %15s %15s\n", "workload", "ember", "libtorch", "ember/lt",
              "ember rate", "libtorch rate");
  std::printf("%s\n", std::string(100, '-').c_str());
  for (const Row& r : rows) {
    bool both = r.torch_s >= 0;
    char ratio[16] = "-";
    if (both) std::snprintf(ratio, sizeof ratio, "%.2fx", r.ember_s / r.torch_s);
    std::printf("%-32s %12s %12s %9s %15s %15s\n", r.name.c_str(), format_time(r.ember_s).c_str(),
                both ? format_time(r.torch_s).c_str() : "-", ratio,
                format_rate(r.work, r.ember_s, r.unit).c_str(),
                both ? format_rate(r.work, r.torch_s, r.unit).c_str() : "-");
  }
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    bool has_value = i + 1 < argc;
    if (has_value && std::strcmp(argv[i], "--threads") == 0) {
      o.threads = std::max(1, std::atoi(argv[++i]));
    } else if (has_value && std::strcmp(argv[i], "--repeats") == 0) {
      o.repeats = std::max(1, std::atoi(argv[++i]));
    } else if (has_value && std::strcmp(argv[i], "--only") == 0) {
      std::string keys = argv[++i];
      for (size_t b = 0, e; b <= keys.size(); b = e + 1) {
        e = keys.find(',', b);
        if (e == std::string::npos) e = keys.size();
        if (e > b) o.only.push_back(keys.substr(b, e - b));
      }
    } else {
      std::fprintf(stderr, "usage: %s [--threads N] [--repeats R] [--only KEYS]\n", argv[0]);
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  ember::set_num_threads(opt.threads);
  torch::set_num_threads(opt.threads);
  ember::manual_seed(0);
  std::printf("ember_vs_libtorch: %d threads (ember %d, libtorch %d), %d repeats, medians\n",
              opt.threads, ember::get_num_threads(), torch::get_num_threads(), opt.repeats);

  std::vector<Row> rows;
  std::vector<std::string> notes;  // lines printed under the table
  const int reps = opt.repeats;

  if (want(opt, "train")) {  // (f) the tutorial's training step: Linear(10, 1), batch 32, Adam, MSE
                             // -- autograd on
    auto model = ember::nn::Linear(10, 1);
    ember::optim::Adam eopt(model->parameters());
    torch::nn::Linear tmodel(10, 1);
    {
      torch::NoGradGuard no_grad;
      tmodel->weight.copy_(to_torch(model->weight.detach()));
      tmodel->bias.copy_(to_torch(model->bias.detach()));
    }
    torch::optim::Adam topt(tmodel->parameters(), torch::optim::AdamOptions(1e-3));
    ember::Tensor X = ember::rand({32, 10}), y = ember::rand({32, 1});
    torch::Tensor tX = to_torch(X), ty = to_torch(y);
    Medians m = measure(
        [&] {
          ember::Tensor loss = ember::nn::F::mse_loss(model(X), y);
          eopt.zero_grad();
          loss.backward();
          eopt.step();
        },
        [&] {
          torch::Tensor loss = torch::mse_loss(tmodel(tX), ty);
          topt.zero_grad();
          loss.backward();
          topt.step();
        },
        2000, reps);
    check_close("training step weights", model->weight.detach(), tmodel->weight.detach(), 1e-4,
                1e-5);
    rows.push_back({"training step: Linear(10,1), b32, Adam", m.ember, m.torch});
  }
  if (want(opt, "mlp")) {  // (g) an MLP training step, 784-256-10, batch 64, Adam, cross-entropy
    auto model = ember::nn::Sequential(ember::nn::Linear(784, 256), ember::nn::ReLU(),
                                       ember::nn::Linear(256, 10));
    ember::optim::Adam eopt(model->parameters());
    torch::nn::Sequential tmodel(torch::nn::Linear(784, 256), torch::nn::ReLU(),
                                 torch::nn::Linear(256, 10));
    {
      torch::NoGradGuard no_grad;
      auto ep = model->parameters();
      auto tp = tmodel->parameters();
      for (size_t i = 0; i < ep.size(); ++i) tp[i].copy_(to_torch(ep[i].detach()));
    }
    torch::optim::Adam topt(tmodel->parameters(), torch::optim::AdamOptions(1e-3));
    ember::Tensor X = ember::rand({64, 784});
    ember::Tensor y = ember::randint(0, 10, {64});
    torch::Tensor tX = to_torch(X);
    torch::Tensor ty = torch::from_blob(y.data_ptr<int64_t>(), {64}, torch::kInt64).clone();
    Medians m = measure(
        [&] {
          ember::Tensor loss = ember::nn::F::cross_entropy(model(X), y);
          eopt.zero_grad();
          loss.backward();
          eopt.step();
        },
        [&] {
          torch::Tensor loss = torch::nn::functional::cross_entropy(tmodel->forward(tX), ty);
          topt.zero_grad();
          loss.backward();
          topt.step();
        },
        100, reps);
    check_close("MLP weights", model->parameters()[0].detach(), tmodel->parameters()[0].detach(),
                1e-3, 1e-4);
    rows.push_back({"MLP step: 784-256-10, b64, Adam", m.ember, m.torch});
  }

  if (want(opt, "cnn")) {  // (g') the CNN of `ember train --model cnn`: a step, batch 64, Adam
    namespace enn = ember::nn;
    namespace tnn = torch::nn;
    auto model = enn::Sequential(enn::Conv2d(1, 32, 3, {.padding = 1}), enn::ReLU(),
                                 enn::MaxPool2d(2), enn::Conv2d(32, 64, 3, {.padding = 1}),
                                 enn::ReLU(), enn::MaxPool2d(2), enn::Flatten(),
                                 enn::Linear(64 * 7 * 7, 128), enn::ReLU(), enn::Linear(128, 10));
    tnn::Sequential tmodel(tnn::Conv2d(tnn::Conv2dOptions(1, 32, 3).padding(1)), tnn::ReLU(),
                           tnn::MaxPool2d(2), tnn::Conv2d(tnn::Conv2dOptions(32, 64, 3).padding(1)),
                           tnn::ReLU(), tnn::MaxPool2d(2), tnn::Flatten(),
                           tnn::Linear(64 * 7 * 7, 128), tnn::ReLU(), tnn::Linear(128, 10));
    {
      torch::NoGradGuard no_grad;
      auto ep = model->parameters();
      auto tp = tmodel->parameters();
      for (size_t i = 0; i < ep.size(); ++i) tp[i].copy_(to_torch(ep[i].detach()));
    }
    ember::optim::Adam eopt(model->parameters());
    torch::optim::Adam topt(tmodel->parameters(), torch::optim::AdamOptions(1e-3));
    ember::Tensor X = ember::rand({64, 1, 28, 28});
    ember::Tensor y = ember::randint(0, 10, {64});
    torch::Tensor tX = to_torch(X);
    torch::Tensor ty = torch::from_blob(y.data_ptr<int64_t>(), {64}, torch::kInt64).clone();
    auto ember_step = [&] {
      ember::Tensor loss = ember::nn::F::cross_entropy(model(X), y);
      eopt.zero_grad();
      loss.backward();
      eopt.step();
    };
    auto torch_step = [&] {
      torch::Tensor loss = torch::nn::functional::cross_entropy(tmodel->forward(tX), ty);
      topt.zero_grad();
      loss.backward();
      topt.step();
    };
    // The forward pass must agree, and one step each must agree but for the near-ties of
    // check_mostly_close (over many Adam steps, float rounding differences grow: Adam moves every
    // weight by about lr whatever the size of its gradient).
    {
      torch::NoGradGuard no_grad;
      check_close("CNN forward", model(X).detach(), tmodel->forward(tX), 1e-4, 1e-5);
    }
    ember_step();
    torch_step();
    for (size_t i = 0; i < model->parameters().size(); ++i)
      check_mostly_close("CNN step", model->parameters()[i].detach(),
                         tmodel->parameters()[i].detach(), 1e-4, 1e-5, 1e-3);
    Medians m = measure(ember_step, torch_step, 10, reps);
    rows.push_back({"CNN step: 2 conv, b64, Adam", m.ember, m.torch});
  }
  if (want(opt, "epoch")) {  // (h) one MLP epoch on in-memory data: 60000 samples of 784 floats,
                             // shuffled each epoch,
    // batches of 64 gathered with index_select, 784-256-10, Adam, cross-entropy. Each library
    // shuffles with its own generator, so only the work (not the numbers) is the same.
    constexpr int64_t kSamples = 60000, kBatch = 64;
    ember::Tensor X = ember::rand({kSamples, 784}), Y = ember::randint(0, 10, {kSamples});
    torch::Tensor tX = to_torch(X);
    torch::Tensor tY = torch::from_blob(Y.data_ptr<int64_t>(), {kSamples}, torch::kInt64).clone();
    auto model = ember::nn::Sequential(ember::nn::Linear(784, 256), ember::nn::ReLU(),
                                       ember::nn::Linear(256, 10));
    ember::optim::Adam eopt(model->parameters());
    torch::nn::Sequential tmodel(torch::nn::Linear(784, 256), torch::nn::ReLU(),
                                 torch::nn::Linear(256, 10));
    torch::optim::Adam topt(tmodel->parameters(), torch::optim::AdamOptions(1e-3));
    float eloss = 0, tloss = 0;
    auto ember_epoch = [&] {
      ember::Tensor perm = ember::randperm(kSamples);
      for (int64_t b = 0; b + kBatch <= kSamples; b += kBatch) {
        ember::Tensor idx = perm.slice(0, b, b + kBatch);
        ember::Tensor loss = ember::nn::F::cross_entropy(model(ember::index_select(X, 0, idx)),
                                                         ember::index_select(Y, 0, idx));
        eopt.zero_grad();
        loss.backward();
        eopt.step();
        eloss = loss.item<float>();
      }
    };
    auto torch_epoch = [&] {
      torch::Tensor perm = torch::randperm(kSamples);
      for (int64_t b = 0; b + kBatch <= kSamples; b += kBatch) {
        torch::Tensor idx = perm.slice(0, b, b + kBatch);
        torch::Tensor loss = torch::nn::functional::cross_entropy(
            tmodel->forward(tX.index_select(0, idx)), tY.index_select(0, idx));
        topt.zero_grad();
        loss.backward();
        topt.step();
        tloss = loss.item<float>();
      }
    };
    Medians m = measure(ember_epoch, torch_epoch, 1, std::min(reps, 3));
    if (!std::isfinite(eloss) || !std::isfinite(tloss)) {
      std::fprintf(stderr, "ember_vs_libtorch: MLP epoch loss is not finite\n");
      return 1;
    }
    rows.push_back({"MLP epoch: 60000 in memory, b64", m.ember, m.torch});
  }
  if (want(opt, "gru")) {  // (g'') a GRU training step: forward over a sequence and backward, input
                           // 256, hidden 256, 32 steps, batch 32, one layer
    constexpr int64_t kIn = 256, kHidden = 256, kSteps = 32, kBatch = 32;
    auto model = ember::nn::GRU(kIn, kHidden);
    torch::nn::GRU tmodel(torch::nn::GRUOptions(kIn, kHidden));
    {
      torch::NoGradGuard no_grad;
      auto tparams = tmodel->named_parameters();
      for (const auto& [name, p] : model->named_parameters())
        tparams[name].copy_(to_torch(p.detach()));
    }
    ember::Tensor X = ember::randn({kSteps, kBatch, kIn}),
                  W = ember::randn({kSteps, kBatch, kHidden});
    torch::Tensor tX = to_torch(X), tW = to_torch(W);
    auto ember_step = [&] {
      model->zero_grad();
      auto [y, h] = model(X);
      (ember::sum(y * W) + ember::sum(h)).backward();
    };
    auto torch_step = [&] {
      tmodel->zero_grad(true);  // to undefined, as ember's
      auto [y, h] = tmodel->forward(tX);
      ((y * tW).sum() + h.sum()).backward();
    };
    ember_step();
    torch_step();
    check_close("GRU step weight_hh grad", model->all_weights[0].w_hh.grad(),
                tmodel->named_parameters()["weight_hh_l0"].grad(), 1e-3, 1e-4);
    Medians m = measure(ember_step, torch_step, 10, reps);
    rows.push_back({"GRU step: 256-256, 32 steps, b32", m.ember, m.torch});
  }
  if (want(opt, "grad")) {  // (a') dispatch with autograd recording: inputs require grad, each op
                            // records a node
    ember::Tensor a = ember::rand({3}).requires_grad_(), b = ember::rand({3}).requires_grad_();
    torch::Tensor ta = to_torch(a.detach()).requires_grad_(),
                  tb = to_torch(b.detach()).requires_grad_();
    ember::Tensor ec;
    torch::Tensor tc;
    Medians m = measure([&] { ec = a + b; }, [&] { tc = ta + tb; }, 200000, reps);
    check_close("add 3 (grad)", ec.detach(), tc.detach(), 1e-6, 1e-6);
    rows.push_back({"add, 3 floats, requires_grad", m.ember, m.torch});
    ember::Tensor b1 = (b.detach() + 1).requires_grad_();
    torch::Tensor tb1 = (tb.detach() + 1).requires_grad_();
    m = measure([&] { ec = chain10(a, b1); }, [&] { tc = chain10(ta, tb1); }, 20000, reps);
    check_close("chain of 10 (grad)", ec.detach(), tc.detach(), 1e-5, 1e-6);
    rows.push_back({"chain of 10, requires_grad", m.ember, m.torch});
  }

  if (want(opt, "embedding_bag")) {  // (e''') a recommender's embedding-bag step: forward and the
    // weight's gradient, 2048 bags of 20 indices into a 100000 x 64 table, mode sum
    constexpr int64_t kRows = 100000, kDim = 64, kBags = 2048, kPer = 20;
    ember::Tensor w = ember::randn({kRows, kDim}).requires_grad_(true);
    ember::Tensor idx = ember::randint(0, kRows, {kBags * kPer});
    ember::Tensor off = ember::arange(0, kBags * kPer, kPer);
    ember::Tensor up = ember::randn({kBags, kDim});
    torch::Tensor tw = to_torch(w.detach()).requires_grad_(true);
    torch::Tensor tidx =
        torch::from_blob(idx.data_ptr<int64_t>(), {kBags * kPer}, torch::kInt64).clone();
    torch::Tensor toff = torch::from_blob(off.data_ptr<int64_t>(), {kBags}, torch::kInt64).clone();
    torch::Tensor tup = to_torch(up);
    ember::Tensor eout;
    torch::Tensor tout;
    Medians m = measure(
        [&] {
          w.mutable_grad() = ember::Tensor();
          eout = ember::nn::F::embedding_bag(idx, w, {.offsets = off, .mode = "sum"});
          eout.backward(up);
        },
        [&] {
          tw.mutable_grad() = torch::Tensor();
          tout = torch::nn::functional::embedding_bag(
              tidx, tw,
              torch::nn::functional::EmbeddingBagFuncOptions().offsets(toff).mode(torch::kSum));
          tout.backward(tup);
        },
        5, reps);
    check_close("embedding_bag sums", eout.detach(), tout.detach(), 1e-5, 1e-5);
    check_close("embedding_bag weight gradient", w.grad(), tw.grad(), 1e-5, 1e-5);
    rows.push_back({"embedding_bag sum fwd+bwd, 2048 bags x 20 of 100000 x 64", m.ember, m.torch});
  }
  if (want(opt, "sdpa")) {  // (e'''') causal attention forward and backward, (8, 8, 1024, 64)
    // float32: ember's fused kernels (and its math path) against LibTorch 1.13's composite
    // (matmul, masked_fill of the causal mask, softmax, matmul, autograd backward).
    constexpr int64_t kB = 8, kH = 8, kL = 1024, kE = 64;
    ember::Tensor q = ember::randn({kB, kH, kL, kE}).requires_grad_(true);
    ember::Tensor k = ember::randn({kB, kH, kL, kE}).requires_grad_(true);
    ember::Tensor v = ember::randn({kB, kH, kL, kE}).requires_grad_(true);
    ember::Tensor up = ember::randn({kB, kH, kL, kE});
    torch::Tensor tq = to_torch(q.detach()).requires_grad_(true);
    torch::Tensor tk = to_torch(k.detach()).requires_grad_(true);
    torch::Tensor tv = to_torch(v.detach()).requires_grad_(true);
    torch::Tensor tup = to_torch(up);
    torch::Tensor hidden = torch::ones({kL, kL}, torch::kBool).tril().logical_not();
    ember::Tensor eout;
    torch::Tensor tout;
    auto ember_step = [&](bool math) {
      for (ember::Tensor* t : {&q, &k, &v}) t->mutable_grad() = ember::Tensor();
      eout = math ? ember::nn::F::scaled_dot_product_attention_math(q, k, v, {.is_causal = true})
                  : ember::nn::F::scaled_dot_product_attention(q, k, v, {.is_causal = true});
      eout.backward(up);
    };
    // Peak resident memory grows by what a step needs beyond what is already mapped: the fused
    // step first, then the math step (which reuses the fused step's freed blocks).
    auto max_rss_mib = [] {
      rusage u{};
      getrusage(RUSAGE_SELF, &u);
      return static_cast<double>(u.ru_maxrss) / 1024.0;
    };
    const double rss0 = max_rss_mib();
    ember_step(false);
    const double rss1 = max_rss_mib();
    ember_step(true);
    const double rss2 = max_rss_mib();
    Medians m = measure([&] { ember_step(false); },
                        [&] {
                          for (torch::Tensor* t : {&tq, &tk, &tv})
                            t->mutable_grad() = torch::Tensor();
                          torch::Tensor s = torch::matmul(tq, tk.transpose(-2, -1)) / 8.0;
                          s = s.masked_fill(hidden, -INFINITY);
                          tout = torch::matmul(torch::softmax(s, -1), tv);
                          tout.backward(tup);
                        },
                        1, reps);
    check_close("sdpa output", eout.detach(), tout.detach(), 1e-4, 1e-5);
    check_close("sdpa query gradient", q.grad(), tq.grad(), 1e-3, 1e-4);
    check_close("sdpa key gradient", k.grad(), tk.grad(), 1e-3, 1e-4);
    check_close("sdpa value gradient", v.grad(), tv.grad(), 1e-3, 1e-4);
    rows.push_back({"sdpa causal fwd+bwd, 8x8x1024x64", m.ember, m.torch});
    std::vector<double> tm;
    for (int r = 0; r < reps; ++r) tm.push_back(time_once([&] { ember_step(true); }, 1));
    rows.push_back({"sdpa math path (ember)", median(tm), -1});
    char line[160];
    std::snprintf(line, sizeof line,
                  "sdpa: peak RSS grew %.0f MiB in ember's first fused step, then %.0f MiB more in "
                  "its first math step; ember's CPU level: %s",
                  rss1 - rss0, rss2 - rss1, ember::get_cpu_capability().c_str());
    notes.push_back(line);
  }
  c10::InferenceMode inference;  // the rest is forward only

  if (want(opt,
           "tiny")) {  // (a) per-op latency: a + b on 3-element tensors, result allocation included
    ember::Tensor a = ember::rand({3}), b = ember::rand({3});
    torch::Tensor ta = to_torch(a), tb = to_torch(b);
    ember::Tensor ec;
    torch::Tensor tc;
    Medians m = measure([&] { ec = a + b; }, [&] { tc = ta + tb; }, 200000, reps);
    check_close("add 3", ec, tc, 1e-6, 1e-6);
    rows.push_back({"add, 3 floats", m.ember, m.torch});
  }
  if (want(opt, "tiny")) {  // (b) ten tiny element-wise ops in a row
    ember::Tensor a = ember::rand({3}), b = ember::rand({3}) + 1;
    torch::Tensor ta = to_torch(a), tb = to_torch(b);
    ember::Tensor ey;
    torch::Tensor ty;
    Medians m = measure([&] { ey = chain10(a, b); }, [&] { ty = chain10(ta, tb); }, 20000, reps);
    check_close("chain of 10", ey, ty, 1e-5, 1e-6);
    rows.push_back({"chain of 10 ops, 3 floats", m.ember, m.torch});
  }
  for (int64_t n : {256, 1024, 2048}) {  // (c) sgemm
    if (!want(opt, "sgemm")) break;
    ember::Tensor a = ember::randn({n, n}), b = ember::randn({n, n});
    torch::Tensor ta = to_torch(a), tb = to_torch(b);
    ember::Tensor ec;
    torch::Tensor tc;
    int iters = n <= 256 ? 100 : n <= 1024 ? 5 : 2;
    Medians m =
        measure([&] { ec = ember::mm(a, b); }, [&] { tc = torch::mm(ta, tb); }, iters, reps);
    check_close("sgemm", ec, tc, 1e-3, 1e-3);
    rows.push_back({"sgemm " + std::to_string(n), m.ember, m.torch,
                    2.0 * static_cast<double>(n * n * n), "GFLOP/s"});
  }
  for (ember::DType dt : {ember::kBFloat16, ember::kFloat16}) {  // (c') 16-bit GEMM at 1024
    if (!want(opt, "halfgemm")) break;
    const int64_t n = 1024;
    ember::Tensor a32 = ember::randn({n, n}), b32 = ember::randn({n, n});
    ember::Tensor a = a32.to(dt), b = b32.to(dt);
    const auto tdt = dt == ember::kBFloat16 ? torch::kBFloat16 : torch::kHalf;
    torch::Tensor ta = to_torch(a.to(ember::kFloat32)).to(tdt),
                  tb = to_torch(b.to(ember::kFloat32)).to(tdt);
    ember::Tensor ec;
    torch::Tensor tc;
    // LibTorch 1.13 has no float16 matmul on the CPU ("addmm_impl_cpu_" not implemented for
    // 'Half'): that row times ember alone, against its own float32 result.
    const bool torch_has = dt == ember::kBFloat16;
    Medians m = measure([&] { ec = ember::mm(a, b); },
                        [&] {
                          if (torch_has) tc = torch::mm(ta, tb);
                        },
                        3, reps);
    if (!torch_has) {
      m.torch = -1;
      tc = to_torch(ember::mm(a.to(ember::kFloat32), b.to(ember::kFloat32)));
    }
    check_close("half gemm", ec.to(ember::kFloat32), tc.to(torch::kFloat), 2e-2, 2e-1);
    rows.push_back({std::string(ember::dtype_name(dt)) + " gemm 1024", m.ember, m.torch,
                    2.0 * static_cast<double>(n * n * n), "GFLOP/s"});
    // Against ember's own float32 GEMM of the same shape, interleaved in one run: the 16-bit cost
    // over float32 (the target is 0.9x float32's rate or better).
    ember::Tensor c32;
    Medians own =
        measure([&] { ec = ember::mm(a, b); }, [&] { c32 = ember::mm(a32, b32); }, 3, reps);
    // And the detour the packing conversion replaced: widen both operands, float32 GEMM, round.
    Medians detour = measure(
        [&] { ec = ember::mm(a, b); },
        [&] { c32 = ember::mm(a.to(ember::kFloat32), b.to(ember::kFloat32)).to(dt); }, 3, reps);
    char line[200];
    std::snprintf(line, sizeof line,
                  "%s gemm 1024: %.2fx ember float32's rate (%.2f vs %.2f ms); widening first "
                  "instead takes %.2fx the time (%.2f vs %.2f ms)",
                  ember::dtype_name(dt), own.torch / own.ember, own.ember * 1e3, own.torch * 1e3,
                  detour.torch / detour.ember, detour.torch * 1e3, detour.ember * 1e3);
    notes.push_back(line);
  }
  if (want(opt, "peak")) {  // the machine's float32 FMA peak, sgemm's limit: medians of `reps` runs
    std::vector<double> t;
    ember_bench::PeakRun run;
    for (int r = 0; r < reps; ++r) {
      run = ember_bench::measure_fma_peak(opt.threads);
      t.push_back(run.seconds);
    }
    rows.push_back(
        {std::string("FMA peak, ") + run.isa + " (limit)", median(t), -1, run.flops, "GFLOP/s"});
  }
  if (want(opt, "add")) {  // (d) memory bound: add at 32M floats (out of place and in place) and
                           // memcpy as the limit
    ember::Tensor a = ember::rand({kLarge}), b = ember::rand({kLarge});
    torch::Tensor ta = to_torch(a), tb = to_torch(b);
    ember::Tensor ec;
    torch::Tensor tc;
    const double bytes3 = 3.0 * kLarge * sizeof(float), bytes2 = 2.0 * kLarge * sizeof(float);
    Medians m = measure([&] { ec = a + b; }, [&] { tc = ta + tb; }, 3, reps);
    check_close("add 32M", ec, tc, 1e-6, 1e-6);
    rows.push_back({"add, 32M floats", m.ember, m.torch, bytes3, "GB/s"});
    ec = ember::Tensor();
    tc = torch::Tensor();

    ember::Tensor ea = a.clone();
    torch::Tensor tta = ta.clone();
    m = measure([&] { ea += b; }, [&] { tta += tb; }, 3, reps);
    rows.push_back({"add_ (in place), 32M floats", m.ember, m.torch, bytes3, "GB/s"});

    // The limit: std::memcpy split over the same threads, between buffers from ember's
    // allocator (so both sides have the same pages as the operands above).
    ember::Tensor src = ember::ones({kLarge}), dst = ember::zeros({kLarge});
    std::vector<double> t;
    auto copy = [&] {
      ember_bench::parallel_memcpy(dst.raw_data_ptr(), src.raw_data_ptr(), kLarge * sizeof(float),
                                   opt.threads);
    };
    time_once(copy, 1);
    for (int r = 0; r < reps; ++r) t.push_back(time_once(copy, 3));
    rows.push_back({"memcpy, 32M floats (limit)", median(t), -1, bytes2, "GB/s"});
  }
  if (want(opt, "chain")) {  // (d') a chain of ten element-wise ops at 32M floats
    ember::Tensor a = ember::rand({kLarge}), b = ember::rand({kLarge}) + 1;
    torch::Tensor ta = to_torch(a), tb = to_torch(b);
    ember::Tensor ey;
    torch::Tensor ty;
    Medians m = measure([&] { ey = chain10(a, b); }, [&] { ty = chain10(ta, tb); }, 1, reps);
    check_close("chain of 10, 32M", ey, ty, 1e-5, 1e-6);
    // four binary ops (3 x 4 B per element) and six unary ones (2 x 4 B)
    rows.push_back({"chain of 10 ops, 32M floats", m.ember, m.torch, 96.0 * kLarge, "GB/s"});
  }
  if (want(opt, "sum")) {  // (e) full reduction at 32M floats
    ember::Tensor a = ember::rand({kLarge});
    torch::Tensor ta = to_torch(a);
    ember::Tensor es;
    torch::Tensor ts;
    Medians m = measure([&] { es = a.sum(); }, [&] { ts = ta.sum(); }, 5, reps);
    check_close("sum 32M", es, ts, 1e-4, 0);
    rows.push_back({"sum, 32M floats", m.ember, m.torch, 1.0 * kLarge * sizeof(float), "GB/s"});
  }
  if (want(opt, "cumsum")) {  // (e') prefix sums of 32M floats, one line
    ember::Tensor a = ember::rand({kLarge});
    torch::Tensor ta = to_torch(a);
    ember::Tensor es;
    torch::Tensor ts;
    Medians m = measure([&] { es = a.cumsum(0); }, [&] { ts = ta.cumsum(0); }, 2, reps);
    check_close("cumsum 32M", es, ts, 1e-5, 1e-2);
    rows.push_back({"cumsum, 32M floats", m.ember, m.torch, 2.0 * kLarge * sizeof(float), "GB/s"});
  }
  if (want(opt, "sort")) {  // (e'') sort and top-k of 1M floats, one row
    constexpr int64_t kSortN = int64_t{1} << 20;
    ember::Tensor a = ember::randn({kSortN});
    torch::Tensor ta = to_torch(a);
    ember::Tensor ev, ei;
    torch::Tensor tv, ti;
    Medians m = measure([&] { std::tie(ev, ei) = ember::sort(a); },
                        [&] { std::tie(tv, ti) = ta.sort(); }, 2, reps);
    check_close("sort 1M values", ev, tv, 0, 0);
    // (equal values may come in another order: the indices must pick the sorted values)
    check_close("sort 1M indices", a.index_select(0, ei), tv, 0, 0);
    rows.push_back(
        {"sort (values, indices), 1M floats", m.ember, m.torch, 1e3 * kSortN, "M elem/s"});
    for (int64_t k : {int64_t{10}, int64_t{1000}}) {
      m = measure([&] { std::tie(ev, ei) = ember::topk(a, k); },
                  [&] { std::tie(tv, ti) = ta.topk(k); }, 2, reps);
      check_close("topk 1M values", ev, tv, 0, 0);
      check_close("topk 1M indices", a.index_select(0, ei), tv, 0, 0);
      rows.push_back({"topk k=" + std::to_string(k) + ", 1M floats", m.ember, m.torch, 1e3 * kSortN,
                      "M elem/s"});
    }
    // Sampling's case: top-k of each row of a batch of logits (64 rows of a 50257 vocabulary).
    ember::Tensor logits = ember::randn({64, 50257});
    torch::Tensor tlogits = to_torch(logits);
    m = measure([&] { std::tie(ev, ei) = ember::topk(logits, 50); },
                [&] { std::tie(tv, ti) = tlogits.topk(50); }, 2, reps);
    check_close("topk rows values", ev, tv, 0, 0);
    rows.push_back({"topk k=50 of rows, 64 x 50257", m.ember, m.torch,
                    1e3 * static_cast<double>(logits.numel()), "M elem/s"});
  }
  if (want(opt, "softmax")) {  // row softmax, (8192, 4096)
    ember::Tensor x = ember::randn({8192, 4096});
    torch::Tensor tx = to_torch(x);
    ember::Tensor ey;
    torch::Tensor ty;
    Medians m = measure([&] { ey = x.softmax(1); }, [&] { ty = tx.softmax(1); }, 2, reps);
    check_close("softmax", ey, ty, 1e-4, 1e-7);
    rows.push_back({"softmax rows, 8192 x 4096", m.ember, m.torch,
                    2.0 * static_cast<double>(x.numel()) * sizeof(float), "GB/s"});
  }

  print_table(rows);
  for (const std::string& n : notes) std::printf("%s\n", n.c_str());
  std::printf(
      "\nember/lt: ember time / libtorch time (< 1: ember faster). Rates: GB/s counts bytes read "
      "+ written once (add 3 x 4 B, memcpy 2 x 4 B, sum 4 B, cumsum and softmax 2 x 4 B, chain of "
      "10 "
      "96 B per element); M elem/s counts the elements of the input (sort, topk).\n");
  return 0;
}
