// tools/gpu_smoke/gpu_smoke.cpp: runs every row of the op table (tests/op_table: the element-wise
// ops, reductions, softmax, matmul, nn ops, losses and index ops, each on the dtypes it supports)
// on cuda:0 against the CPU, then the CUDA paths the table does not reach -- copies and fills,
// large and misaligned element-wise and reduction kernels, matmul sizes and TF32, softmax, conv
// and pooling backward, index ops, 16-bit attention on tensor cores (the table's attention rows
// have head dims under 16, so their bfloat16 / float16 rows take the float32 kernels), random
// numbers, optimizer steps, autograd, the allocator,
// streams and events, record_stream, graphs, peer copies, pinned memory. Prints PASS / FAIL per
// check (per row and dtype for the table) and exits 1 on any failure, 77 without a GPU. With
// --bench it prints the milliseconds of a few large ops instead (scripts/gpu-check.sh compares
// with PyTorch). With --fake it registers CPU code as the "cuda" backend and skips the runtime
// checks: a run on any machine that tests this program itself, not the kernels.
// --op-table-large-only runs the op table's rows on their larger samples alone: the emulated
// device's suite runs the rows' own samples (OpTable/*_cuda).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/pinned_memory.h"
#include "ember/ember.h"
#include "ember/io/dlpack.h"
#include "ember/io/npy.h"
#include "ember/io/safetensors.h"
#include "op_table/op_table.h"

using namespace ember;
namespace F = ember::nn::functional;

namespace {

int failures = 0, passes = 0;
bool fake = false;
// --op-table-large-only: the op table's rows on their larger samples alone.
bool large_samples_only = false;

class FakeCuda : public CpuBackend {
 public:
  int device_count() override { return 1; }
  std::string device_name(int) override { return "fake GPU (CPU code)"; }
};
const Device kGpu("cuda:0");

TensorOptions gpu(DType dtype = kFloat32) {
  return TensorOptions{.dtype = dtype, .device = kGpu};
}

// x > v elementwise.
Tensor above(const Tensor& x, double v) {
  return x.gt(full_like(x, v));
}

std::vector<double> values(const Tensor& t) {
  return t.cpu().to(kFloat64).contiguous().to_vector<double>();
}

void report(const std::string& name, bool ok, const std::string& detail = "") {
  (ok ? passes : failures)++;
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.empty() ? "" : ": ",
              detail.c_str());
}

// actual (any device) against expected (CPU): same shape, values within atol + rtol * |e|.
void check(const std::string& name, const Tensor& actual, const Tensor& expected,
           double rtol = 1e-5, double atol = 1e-6) {
  if (actual.sizes() != expected.sizes()) {
    report(name, false,
           "shape " + shape_str(actual.sizes()) + " vs " + shape_str(expected.sizes()));
    return;
  }
  if (actual.dtype() != expected.dtype()) {
    report(
        name, false,
        std::string("dtype ") + dtype_name(actual.dtype()) + " vs " + dtype_name(expected.dtype()));
    return;
  }
  auto a = values(actual), e = values(expected);
  double worst = 0;
  size_t bad = a.size();
  for (size_t i = 0; i < a.size(); ++i) {
    bool both_nan = std::isnan(a[i]) && std::isnan(e[i]);
    bool same_inf = std::isinf(a[i]) && a[i] == e[i];
    double err = std::fabs(a[i] - e[i]);
    if (!both_nan && !same_inf && !(err <= atol + rtol * std::fabs(e[i]))) {
      if (bad == a.size()) bad = i;
      worst = std::max(worst, std::isnan(err) ? INFINITY : err);
    }
  }
  if (bad == a.size()) {
    report(name, true);
  } else {
    char buf[160];
    std::snprintf(buf, sizeof buf, "element %zu: %.9g vs expected %.9g (max error %.3g)", bad,
                  a[bad], e[bad], worst);
    report(name, false, buf);
  }
}

// Runs f; an exception is a failure of `name`.
void guarded(const std::string& name, const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    report(name, false, std::string("threw: ") + e.what());
  }
}

void copies() {
  for (DType t : {kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64}) {
    Tensor x = randint(0, 3, {37, 41}, TensorOptions{.dtype = t == kBool ? kInt64 : t});
    if (t == kBool) x = above(x, 1);
    std::string n = std::string("copy ") + dtype_name(t);
    Tensor d = x.to(kGpu);
    check(n + " round trip", d, x, 0, 0);
    check(n + " transpose", d.t().contiguous(), x.t().contiguous(), 0, 0);
    check(n + " slice step 3", d.index({indexing::Slice(1, 30, 3)}).contiguous(),
          x.index({indexing::Slice(1, 30, 3)}).contiguous(), 0, 0);
    for (DType to : {kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64})
      check(n + " to " + dtype_name(to), d.to(to), x.to(to), 0, 0);
  }
  Tensor r = randn({5, 1, 7});
  check("copy broadcast expand", r.to(kGpu).expand({5, 6, 7}).contiguous(),
        r.expand({5, 6, 7}).contiguous(), 0, 0);
  check("copy float->uint8 via int64", (r * 50).abs().to(kGpu).to(kUInt8),
        (r * 50).abs().to(kUInt8), 0, 0);
  Tensor big = randn({1 << 22});
  check("copy 4M floats", big.to(kGpu), big, 0, 0);
  check("fill full", full({100, 3}, 2.5, gpu(kFloat64)), full({100, 3}, 2.5, {.dtype = kFloat64}),
        0, 0);
  Tensor z = zeros({64, 64}, gpu());
  z.index({indexing::Slice(), 3}).fill_(7);
  Tensor zc = zeros({64, 64});
  zc.index({indexing::Slice(), 3}).fill_(7);
  check("fill strided column", z, zc, 0, 0);
}

// Every row of the op table (tests/op_table) on cuda:0, for each of its dtypes there, through the
// test suite's runner (op_table::run_values: the reference, the CPU, transposed and strided
// inputs, the row's cuda tolerances, skips and expected failures): the row's samples, and for
// binary element-wise rows (broadcast) and reductions along a dim one larger sample that spans
// many CUDA blocks. One PASS, FAIL or SKIP per row and dtype.
void op_table_rows() {
  for (const op_table::OpRow& row : op_table::rows()) {
    op_table::RunOptions options;
    if (row.binary_ref) options.extra_samples.push_back({{33, 65}, {65}});
    if (row.along_dim) options.extra_samples.push_back({{300, 257}});
    // Alone, the larger samples are checked against the CPU, whose values the suite checks
    // against the reference on the row's own samples.
    options.only_extra_samples = large_samples_only;
    options.against_reference = !large_samples_only;
    if (large_samples_only && options.extra_samples.empty()) continue;
    for (DType t : op_table::dtypes_on(row, kCUDA)) {
      const std::string name = row.id() + " " + dtype_name(t);
      const op_table::Decision d = op_table::decide(row, t, kCUDA);
      if (d.verdict == op_table::Verdict::Skip) {
        std::printf("SKIP %s: %s\n", name.c_str(), d.reason.c_str());
        continue;
      }
      guarded(name, [&] {
        const std::vector<std::string> failures = op_table::run_values(row, t, kGpu, options);
        if (d.verdict == op_table::Verdict::ExpectFailure)
          report(name + " (expected to fail: " + d.reason + ")", !failures.empty(),
                 failures.empty() ? "passed: remove the row's device exception" : "");
        else
          report(name, failures.empty(), failures.empty() ? "" : failures.front());
      });
    }
  }
}

// Element-wise paths the table's small samples do not reach: vectorized and misaligned kernels.
void elementwise() {
  Tensor big = randn({1 << 20});
  Tensor bg = big.to(kGpu);
  check("vectorized add 1M", bg + bg * 2, big + big * 2, 1e-6, 1e-6);
  Tensor off =
      bg.index({indexing::Slice(1, std::nullopt)});  // misaligned start: the strided kernel
  check("misaligned add", off + off, big.index({indexing::Slice(1, std::nullopt)}) * 2, 1e-6, 1e-6);
  Tensor nan = tensor({1.0, NAN, -2.0}).to(kGpu);
  check("maximum NaN", maximum(nan, zeros({3}, gpu(kFloat64))),
        maximum(tensor({1.0, NAN, -2.0}), zeros({3}, {.dtype = kFloat64})), 0, 0);
}

// Reduction paths the op table's samples do not reach: whole large tensors, several dims, chunked
// sums, long rows, ties, NaN.
void reductions() {
  for (DType t : {kFloat32, kFloat64}) {
    std::string s = std::string(" ") + dtype_name(t);
    double tol = t == kFloat32 ? 1e-5 : 1e-10;
    Tensor x = randn({300, 257}, {.dtype = t}), r3 = randn({6, 50, 70}, {.dtype = t});
    check("sum all 300x257" + s, sum(x.to(kGpu)), sum(x), tol, tol);
    check("sum dims 0,2" + s, sum(r3.to(kGpu), {0, 2}), sum(r3, {0, 2}), tol, tol);
  }
  Tensor big = rand({10000019});
  check("sum 10M (chunked)", sum(big.to(kGpu)), sum(big), 1e-6, 1e-3);
  Tensor ints = randint(-1000, 1000, {5000, 3});
  check("sum int64", sum(ints.to(kGpu), {0}), sum(ints, {0}), 0, 0);
  Tensor ties = tensor({3.0, 1.0, 3.0, 1.0, 2.0}).to(kGpu);
  check(
      "argmax first of ties", stack({argmax(ties), argmin(ties)}),
      stack({argmax(tensor({3.0, 1.0, 3.0, 1.0, 2.0})), argmin(tensor({3.0, 1.0, 3.0, 1.0, 2.0}))}),
      0, 0);
  Tensor withnan = tensor({1.0, NAN, 5.0});
  check("max NaN propagates", stack({max(withnan.to(kGpu)), argmax(withnan.to(kGpu)).to(kFloat64)}),
        stack({max(withnan), argmax(withnan).to(kFloat64)}), 0, 0);
  Tensor longrow = randn({3, 100000});
  check("argmax long rows", argmax(longrow.to(kGpu), 1), argmax(longrow, 1), 0, 0);
  Tensor b = above(randint(0, 2, {1000}), 0);
  check("sum bool", sum(b.to(kGpu)), sum(b), 0, 0);
}

void linear_algebra() {
  for (DType t : {kFloat32, kFloat64}) {
    std::string s = std::string(" ") + dtype_name(t);
    double tol = t == kFloat32 ? 1e-4 : 1e-10;
    Tensor a = randn({64, 128}, {.dtype = t}), b = randn({128, 32}, {.dtype = t});
    Tensor ag = a.to(kGpu), bg = b.to(kGpu);
    check("mm" + s, mm(ag, bg), mm(a, b), tol, tol);
    check("mm transposed a" + s, mm(ag.t().contiguous().t(), bg), mm(a, b), tol, tol);
    check("mm transposed b" + s, mm(ag, bg.t().contiguous().t()), mm(a, b), tol, tol);
    check("mm strided slice (packed)" + s,
          mm(ag.index({indexing::Slice(), indexing::Slice(0, 128, 2)}),
             bg.index({indexing::Slice(0, 64)})),
          mm(a.index({indexing::Slice(), indexing::Slice(0, 128, 2)}),
             b.index({indexing::Slice(0, 64)})),
          tol, tol);
    Tensor ba = randn({5, 7, 9}, {.dtype = t}), bb = randn({9, 4}, {.dtype = t});
    check("matmul batched broadcast" + s, matmul(ba.to(kGpu), bb.to(kGpu)), matmul(ba, bb), tol,
          tol);
    check("bmm" + s, bmm(ba.to(kGpu), ba.to(kGpu).transpose(1, 2)), bmm(ba, ba.transpose(1, 2)),
          tol, tol);
    check(
        "matvec" + s,
        matmul(ag, bg.index({indexing::Slice(), 0}).contiguous().index({indexing::Slice(0, 128)})),
        matmul(a, b.index({indexing::Slice(), 0}).contiguous()), tol, tol);
    check("mm K=0" + s, mm(zeros({3, 0}, gpu(t)), zeros({0, 4}, gpu(t))),
          zeros({3, 4}, {.dtype = t}), 0, 0);
  }
  Tensor ia = randint(-5, 5, {6, 7}), ib = randint(-5, 5, {7, 3});
  check("mm int64", mm(ia.to(kGpu), ib.to(kGpu)), mm(ia, ib), 0, 0);
  Tensor big_a = randn({1024, 1024}), big_b = randn({1024, 1024});
  check("mm 1024 float32 full precision", mm(big_a.to(kGpu), big_b.to(kGpu)), mm(big_a, big_b),
        1e-4, 1e-3);
  // TF32 keeps 10 mantissa bits: sums of 1024 products of N(0, 1) values (size ~32) stay within
  // about 0.3 of the float64 result; the float32 result within 1e-3.
  Tensor ref = mm(big_a.to(kFloat64), big_b.to(kFloat64));
  set_float32_matmul_precision("high");
  Tensor tf32 = mm(big_a.to(kGpu), big_b.to(kGpu));
  Tensor tf32_batched = bmm(big_a.to(kGpu).unsqueeze(0), big_b.to(kGpu).unsqueeze(0)).squeeze(0);
  set_float32_matmul_precision("highest");
  check("mm 1024 TF32 (precision high)", tf32.to(kFloat64), ref, 1e-2, 0.3);
  check("bmm 1024 TF32 (precision high)", tf32_batched.to(kFloat64), ref, 1e-2, 0.3);
  if (!fake) {
    double worst = (tf32.cpu().to(kFloat64) - ref).abs().max().item<double>();
    report("TF32 differs from full float32 (tensor cores used)", worst > 1e-3,
           "max |error| " + std::to_string(worst));
  }
}

void softmax_conv_index() {
  for (DType t : {kFloat32, kFloat64}) {
    std::string s = std::string(" ") + dtype_name(t);
    double tol = t == kFloat32 ? 1e-5 : 1e-12;
    Tensor x = randn({37, 300}, {.dtype = t}) * 5;
    Tensor xg = x.to(kGpu);
    check("softmax last dim" + s, softmax(xg, 1), softmax(x, 1), tol, 1e-7);
    check("log_softmax last dim" + s, log_softmax(xg, 1), log_softmax(x, 1), tol, tol);
    check("softmax dim 0" + s, softmax(xg, 0), softmax(x, 0), tol, 1e-7);
    check("log_softmax short rows" + s,
          log_softmax(xg.index({indexing::Slice(), indexing::Slice(0, 10)}).contiguous(), 1),
          log_softmax(x.index({indexing::Slice(), indexing::Slice(0, 10)}).contiguous(), 1), tol,
          tol);
    Tensor inf = tensor({-INFINITY, 0.0, 1.0}, {.dtype = t});
    check("softmax -inf" + s, softmax(inf.to(kGpu), 0), softmax(inf, 0), tol, 1e-7);
    Tensor target = randint(0, 300, {37});
    check("cross_entropy" + s, F::cross_entropy(xg, target.to(kGpu)), F::cross_entropy(x, target),
          tol, tol);
    Tensor img = randn({2, 3, 11, 13}, {.dtype = t}), w = randn({4, 3, 3, 3}, {.dtype = t});
    Tensor bias = randn({4}, {.dtype = t});
    F::Conv2dFuncOptions opt{.stride = 2, .padding = 1, .dilation = 1};
    check("conv2d" + s, F::conv2d(img.to(kGpu), w.to(kGpu), bias.to(kGpu), opt),
          F::conv2d(img, w, bias, opt), tol * 10, tol * 10);
    guarded("conv2d backward" + s, [&] {
      Tensor ic = img.clone().requires_grad_(), ig = img.to(kGpu).requires_grad_();
      Tensor wc = w.clone().requires_grad_(), wg = w.to(kGpu).requires_grad_();
      F::conv2d(ic, wc, Tensor(), opt).sum().backward();
      F::conv2d(ig, wg, Tensor(), opt).sum().backward();
      check("conv2d grad input (col2im)" + s, ig.grad(), ic.grad(), tol * 10, tol * 10);
      check("conv2d grad weight" + s, wg.grad(), wc.grad(), tol * 10, tol * 10);
    });
    check("max_pool2d" + s, F::max_pool2d(img.to(kGpu), 2), F::max_pool2d(img, 2), 0, 0);
    guarded("max_pool2d backward" + s, [&] {
      // Overlapping windows with padding and dilation, and ceil_mode's partial windows.
      F::MaxPool2dOptions po{.stride = {2, 1}, .padding = 1, .dilation = {1, 2}, .ceil_mode = true};
      Tensor ic = img.clone().requires_grad_(), ig = img.to(kGpu).requires_grad_();
      Tensor oc = F::max_pool2d(ic, 3, po), og = F::max_pool2d(ig, 3, po);
      check("max_pool2d overlapping" + s, og, oc, 0, 0);
      (oc * oc).sum().backward();
      (og * og).sum().backward();
      check("max_pool2d grad input" + s, ig.grad(), ic.grad(), tol, tol);
    });
  }
  Tensor src = randn({10, 6});
  Tensor idx = from_vector(std::vector<int64_t>{3, 0, 9, 3});
  check("index_select dim 0", index_select(src.to(kGpu), 0, idx.to(kGpu)),
        index_select(src, 0, idx), 0, 0);
  check("index_select dim 1",
        index_select(src.to(kGpu), 1, idx.index({indexing::Slice(0, 2)}).to(kGpu)),
        index_select(src, 1, idx.index({indexing::Slice(0, 2)})), 0, 0);
  Tensor gidx = randint(0, 6, {10, 4});
  check("gather", gather(src.to(kGpu), 1, gidx.to(kGpu)), gather(src, 1, gidx), 0, 0);
  Tensor sidx = randint(0, 10, {40, 6});
  Tensor upd = randn({40, 6});
  check("scatter_add repeated indices",
        scatter_add(zeros({10, 6}, gpu()), 0, sidx.to(kGpu), upd.to(kGpu)),
        scatter_add(zeros({10, 6}), 0, sidx, upd), 1e-5, 1e-5);
  Tensor iupd = randint(0, 9, {40, 6}, {.dtype = kUInt8});
  check("scatter_add uint8",
        scatter_add(zeros({10, 6}, gpu(kUInt8)), 0, sidx.to(kGpu), iupd.to(kGpu)),
        scatter_add(zeros({10, 6}, {.dtype = kUInt8}), 0, sidx, iupd), 0, 0);
  Tensor emb = randn({50, 8});
  Tensor tok = randint(0, 50, {4, 5});
  check("embedding", F::embedding(tok.to(kGpu), emb.to(kGpu)), F::embedding(tok, emb), 0, 0);
}

// bfloat16 / float16 attention with head dims of multiples of 16 (cuda_attention_half.cu's
// tensor-core kernels: the output is the fused node's own, no conversion after it; shapes whose
// tiles fit the shared memory of every sm_80+ GPU) against the CPU's float32 math path on the
// same values: the output and the gradients of q, k and v.
void attention_half() {
  struct Shapes {
    const char* name;
    Shape q, k, v;
    bool causal, gqa, mask;
  };
  const std::vector<Shapes> cases = {
      {"ragged", {2, 3, 130, 64}, {2, 3, 100, 64}, {2, 3, 100, 64}, false, false, false},
      {"causal gqa E != Ev", {1, 4, 150, 32}, {1, 2, 150, 32}, {1, 2, 150, 64}, true, true, false},
      {"bool mask", {2, 2, 67, 128}, {2, 2, 75, 128}, {2, 2, 75, 16}, false, false, true},
  };
  for (DType t : {kBFloat16, kFloat16}) {
    const double tol = t == kBFloat16 ? 3e-2 : 6e-3, grad_tol = t == kBFloat16 ? 6e-2 : 1.5e-2;
    for (const Shapes& c : cases) {
      const std::string name = std::string("attention ") + c.name + " " + dtype_name(t);
      guarded(name, [&] {
        Tensor q = randn(c.q).to(t), k = randn(c.k).to(t), v = randn(c.v).to(t);
        Tensor keep = c.mask ? above(rand({c.q[2], c.k[2]}), 0.2) : Tensor();
        F::ScaledDotProductAttentionOptions opt{
            .attn_mask = keep, .is_causal = c.causal, .enable_gqa = c.gqa};
        std::vector<Tensor> cpu = {q.to(kFloat32).requires_grad_(), k.to(kFloat32).requires_grad_(),
                                   v.to(kFloat32).requires_grad_()};
        Tensor ref = F::scaled_dot_product_attention_math(cpu[0], cpu[1], cpu[2], opt);
        Tensor g = randn(ref.sizes()).to(t);
        std::vector<Tensor> ref_grads = autograd::grad({ref}, cpu, {g.to(kFloat32)});
        std::vector<Tensor> dev = {q.to(kGpu).requires_grad_(), k.to(kGpu).requires_grad_(),
                                   v.to(kGpu).requires_grad_()};
        if (keep.defined()) opt.attn_mask = keep.to(kGpu);
        Tensor out = F::scaled_dot_product_attention(dev[0], dev[1], dev[2], opt);
        if (!fake)
          report(name + " on tensor cores",
                 out.grad_fn() && out.grad_fn()->name() ==
                                      std::string("ScaledDotProductFlashAttentionBackward0"),
                 out.grad_fn() ? out.grad_fn()->name() : "no grad_fn");
        std::vector<Tensor> grads = autograd::grad({out}, dev, {g.to(kGpu)});
        check(name, out.to(kFloat32), ref, tol, tol);
        for (int i = 0; i < 3; ++i)
          check(name + " grad " + "qkv"[i], grads[i].to(kFloat32), ref_grads[i], grad_tol,
                grad_tol);
      });
    }
  }
}

void random_numbers() {
  for (DType t : {kFloat32, kFloat64}) {
    std::string s = std::string(" ") + dtype_name(t);
    Generator gc(1234), gg(1234);
    Tensor a = rand({1001}, {.dtype = t}, &gc), b = rand({1001}, gpu(t), &gg);
    check("rand equals CPU stream" + s, b, a, 0, 0);
    Tensor n1 = randn({1001}, {.dtype = t}, &gc), n2 = randn({1001}, gpu(t), &gg);
    check("randn matches CPU stream" + s, n2, n1, 1e-5, 1e-6);
  }
  Generator gc(99), gg(99);
  check("randint equals CPU stream", randint(-7, 1000, {777}, gpu(kInt32), &gg),
        randint(-7, 1000, {777}, {.dtype = kInt32}, &gc), 0, 0);
  Tensor big = randn({1 << 20}, gpu());
  double m = mean(big).item<double>(), sd = ember::std(big).item<double>();
  report("randn moments", std::fabs(m) < 0.01 && std::fabs(sd - 1) < 0.01,
         "mean " + std::to_string(m) + " std " + std::to_string(sd));
}

// Saving CUDA tensors (copied back to the host) and DLPack export/import of CUDA memory, zero-copy.
void files_and_dlpack() {
  Tensor x = randn({3, 5});
  Tensor xg = x.to(kGpu);
  const std::string dir = std::filesystem::temp_directory_path().string();
  guarded("save from cuda", [&] {
    const std::string st = dir + "/ember_gpu_smoke.safetensors", npy = dir + "/ember_gpu_smoke.npy";
    io::save_safetensors(st, {{"x", xg}, {"t", xg.t()}});
    io::SafetensorsFile f = io::load_safetensors(st);
    check("safetensors of a cuda tensor", f.tensors.at(0).second, x, 0, 0);
    check("safetensors of a transposed cuda view", f.tensors.at(1).second, x.t(), 0, 0);
    check("safetensors loaded onto cuda", io::load_safetensors(st, kGpu).tensors.at(0).second, x, 0,
          0);
    io::save_npy(npy, xg);
    check("npy of a cuda tensor", io::load_npy(npy), x, 0, 0);
    std::filesystem::remove(st);
    std::filesystem::remove(npy);
  });
  guarded("dlpack on cuda", [&] {
    dlpack::DLManagedTensor* m = io::to_dlpack(xg);
    report("dlpack device is kDLCUDA:0", m->dl_tensor.device.device_type == dlpack::kDLCUDA &&
                                             m->dl_tensor.device.device_id == 0);
    void* exported = m->dl_tensor.data;
    Tensor back = io::from_dlpack(m);
    dlpack::DLManagedTensor* again = io::to_dlpack(back);
    report("dlpack import is zero-copy on cuda:0",
           back.device() == kGpu && again->dl_tensor.data == exported);
    again->deleter(again);
    back.fill_(2.5);  // writes through to xg's memory
    check("dlpack import shares memory", xg, full({3, 5}, 2.5), 0, 0);
  });
}

void optimizers() {
  auto run = [](const std::string& name, auto make) {
    guarded(name, [&] {
      std::vector<Tensor> pc, pg;
      for (int64_t n : {7, 300, 4096, 1}) {
        Tensor p = randn({n});
        pc.push_back(p.clone().requires_grad_());
        pg.push_back(p.to(kGpu).requires_grad_());
      }
      for (int i = 0; i < 40; ++i) pc.push_back(randn({3}).requires_grad_());  // > 32 params
      for (size_t i = 4; i < pc.size(); ++i) pg.push_back(pc[i].detach().to(kGpu).requires_grad_());
      auto oc = make(pc), og = make(pg);
      for (int step = 0; step < 3; ++step) {
        oc.zero_grad();
        og.zero_grad();
        Tensor lc = zeros({}), lg = zeros({}, gpu());
        for (size_t i = 0; i < pc.size(); ++i) {
          lc = lc + (pc[i] * pc[i]).sum() * (1.0 + i % 3);
          lg = lg + (pg[i] * pg[i]).sum() * (1.0 + i % 3);
        }
        lc.backward();
        lg.backward();
        oc.step();
        og.step();
      }
      for (size_t i = 0; i < pc.size(); i += 11)
        check(name + " param " + std::to_string(i), pg[i], pc[i].detach(), 1e-5, 1e-6);
    });
  };
  run("SGD momentum nesterov", [](std::vector<Tensor> p) {
    return optim::SGD(p, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
  });
  run("Adam amsgrad", [](std::vector<Tensor> p) {
    return optim::Adam(p, {.lr = 0.01, .weight_decay = 0.1, .amsgrad = true});
  });
  run("AdamW", [](std::vector<Tensor> p) { return optim::AdamW(p, {.lr = 0.01}); });
}

void runtime();

void training_and_runtime() {
  guarded("mlp gradients", [] {
    manual_seed(0);
    nn::Sequential net_cpu(nn::Linear(20, 64), nn::ReLU(), nn::Linear(64, 5));
    Tensor x = randn({32, 20});
    Tensor y = randint(0, 5, {32});
    F::cross_entropy(net_cpu->forward(x), y).backward();
    std::vector<Tensor> gcpu;
    for (const Tensor& p : net_cpu->parameters()) gcpu.push_back(p.grad().clone());
    net_cpu->zero_grad();
    net_cpu->to(kGpu);
    F::cross_entropy(net_cpu->forward(x.to(kGpu)), y.to(kGpu)).backward();
    auto params = net_cpu->parameters();
    for (size_t i = 0; i < params.size(); ++i)
      check("mlp grad " + std::to_string(i), params[i].grad(), gcpu[i], 1e-4, 1e-6);
  });
  if (!fake) runtime();
}

void runtime() {
  guarded("allocator", [] {
    cuda::synchronize();
    size_t before = cuda::memory_allocated();
    {
      Tensor t = empty({1 << 20}, gpu());
      report("memory_allocated grows by the tensor",
             cuda::memory_allocated() == before + (4u << 20));
    }
    report("memory_allocated returns", cuda::memory_allocated() == before);
    try {
      empty({int64_t{1} << 48}, gpu());
      report("out of memory throws", false, "did not throw");
    } catch (const Error& e) {
      report("out of memory throws OutOfMemory", e.kind() == ErrorKind::OutOfMemory, e.what());
    }
    report("usable after out of memory", ones({10}, gpu()).sum().item<float>() == 10.0f);
  });
  guarded("streams", [] {
    cuda::Stream s = cuda::Stream::create();
    cuda::Event a(true), b(true);
    Tensor x = randn({512, 512}, gpu());
    Tensor y;
    {
      cuda::StreamGuard g(s);
      a.record();
      y = mm(x, x);
      b.record();
    }
    b.synchronize();
    report("event elapsed_time", a.elapsed_time(b) >= 0);
    check("matmul on a side stream", y, mm(x.cpu(), x.cpu()), 1e-4, 1e-4);
  });
  guarded("record_stream", [] {
    cuda::Stream side = cuda::Stream::create();
    Tensor x = randn({2048, 2048}, gpu());
    Tensor expected = mm(x.cpu(), x.cpu()).sum();
    const void* p = x.storage()->data();  // the device address (raw_data_ptr is host-only)
    Tensor y;
    {
      cuda::StreamGuard g(side);
      side.wait_stream(cuda::Stream::default_stream());
      y = mm(x, x).sum();
    }
    x.record_stream(side);
    x = Tensor();
    Tensor z = empty({2048, 2048}, gpu());
    bool busy = !side.query();  // then it was busy when z was allocated
    report("record_stream: block not reused while the stream is busy",
           !busy || z.storage()->data() != p,
           busy ? "side stream was busy" : "side stream finished");
    z.fill_(1);
    side.synchronize();
    check("record_stream: side stream result", y, expected, 1e-3, 1e-1);
  });
  // Graph capture needs the caching allocator, which memcheck runs turn off.
  const char* no_caching = std::getenv("EMBER_CUDA_NO_CACHING");
  if (no_caching && *no_caching && std::strcmp(no_caching, "0") != 0)
    std::printf("SKIP graph: EMBER_CUDA_NO_CACHING is set\n");
  else
    guarded("graph", [] {
      Tensor x = randn({256, 32}, gpu()), w = randn({32, 16}, gpu());
      cuda::Stream side = cuda::Stream::create();
      cuda::Graph graph;
      Tensor y;
      {
        cuda::StreamGuard g(side);
        side.wait_stream(cuda::Stream::default_stream());
        y = softmax(mm(x, w), 1).sum({0});
        graph.capture_begin();
        y = softmax(mm(x, w), 1).sum({0});
        graph.capture_end();
      }
      Tensor x2 = randn({256, 32});
      x.copy_(x2);
      graph.replay();
      check("graph replay with new input", y, softmax(mm(x2, w.cpu()), 1).sum({0}), 1e-4, 1e-4);
    });
  if (cuda::device_count() >= 2) {
    guarded("peer copies", [] {
      Device d1("cuda:1");
      Tensor m = randn({300, 200});
      Tensor on0 = m.to(kGpu);
      check("cuda:0 -> cuda:1", on0.to(d1), m, 0, 0);
      check("cuda:0 -> cuda:1 transposed, float64", on0.t().to(d1, kFloat64), m.t().to(kFloat64), 0,
            0);
      Tensor back = zeros({200, 900}, TensorOptions{.device = kGpu});
      back.index({indexing::Slice(), indexing::Slice(0, 900, 3)}).copy_(on0.t().to(d1));
      check("cuda:1 -> cuda:0 strided destination",
            back.index({indexing::Slice(), indexing::Slice(0, 900, 3)}), m.t(), 0, 0);
    });
  }
  guarded("pinned", [] {
    Tensor h = randn({1 << 20}).pin_memory();
    report("pin_memory", h.is_pinned());
    Tensor d = h.to(kGpu, true);
    Tensor back = empty({1 << 20}).pin_memory();
    back.copy_(d, true);
    cuda::synchronize();
    check("pinned async round trip", back, h, 0, 0);
    const void* p = back.raw_data_ptr();
    back = Tensor();
    cuda::empty_cache();
    report("empty_cache gives idle pinned blocks back", !is_pinned_pointer(p));
  });
}

double time_ms(const std::function<void()>& f, int reps) {
  f();
  cuda::synchronize();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  cuda::synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
         reps;
}

// Prints one benchmark row: name, unit, value (scripts/gpu-check.sh reads these).
void row(const std::string& name, const char* unit, double value) {
  std::printf("%s %s %.4f\n", name.c_str(), unit, value);
  std::fflush(stdout);
}

// Repetitions for a copy of `mb` MiB: about 1 GiB moved, at least 3.
int copy_reps(int mb) {
  return std::max(3, 1024 / mb);
}

// Host <-> device copies of 1 MiB to 1 GiB, pageable and pinned, in GB/s: ember's copy_ and the
// raw CUDA call on the same buffers ("raw_" rows).
void bench_copies() {
  for (int mb : {1, 16, 256, 1024}) {
    int64_t n = int64_t{mb} << 18;  // float32 elements
    double gb = static_cast<double>(n) * 4 / 1e9;
    int reps = copy_reps(mb);
    Tensor dev = zeros({n}, gpu());
    Tensor pageable = full({n}, 1.5f);
    Tensor pinned = full({n}, 1.5f).pin_memory();
    void* d = dev.storage()->data();
    std::string size = std::to_string(mb) + "MB";
    auto rate = [&](const std::function<void()>& f) { return gb / (time_ms(f, reps) / 1e3); };
    row("h2d_pageable_" + size, "GB/s", rate([&] { dev.copy_(pageable); }));
    row("raw_h2d_pageable_" + size, "GB/s",
        rate([&] { cudaMemcpy(d, pageable.raw_data_ptr(), n * 4, cudaMemcpyHostToDevice); }));
    row("h2d_pinned_" + size, "GB/s", rate([&] { dev.copy_(pinned, true); }));
    row("raw_h2d_pinned_" + size, "GB/s", rate([&] {
          cudaMemcpyAsync(d, pinned.raw_data_ptr(), n * 4, cudaMemcpyHostToDevice, nullptr);
        }));
    row("d2h_pageable_" + size, "GB/s", rate([&] { pageable.copy_(dev); }));
    row("raw_d2h_pageable_" + size, "GB/s",
        rate([&] { cudaMemcpy(pageable.raw_data_ptr(), d, n * 4, cudaMemcpyDeviceToHost); }));
    row("d2h_pinned_" + size, "GB/s", rate([&] { pinned.copy_(dev, true); }));
    row("raw_d2h_pinned_" + size, "GB/s", rate([&] {
          cudaMemcpyAsync(pinned.raw_data_ptr(), d, n * 4, cudaMemcpyDeviceToHost, nullptr);
        }));
  }
  cuda::empty_cache();
}

// The SGD training step captured once in a cuda::Graph and replayed, in ms per step (Adam's
// step count would be frozen in the graph, so SGD).
double graph_training_step_ms() {
  manual_seed(0);
  nn::Linear model(10, 1);
  model->to(kGpu);
  Tensor x = randn({32, 10}, gpu()), y = randn({32, 1}, gpu());
  optim::SGD opt(model->parameters(), optim::SGDOptions{.lr = 1e-3});
  auto step = [&] {
    Tensor loss = F::mse_loss(model(x), y);
    loss.backward();
    opt.step();
  };
  cuda::Stream side = cuda::Stream::create();
  cuda::Graph graph;
  {
    cuda::StreamGuard g(side);
    side.wait_stream(cuda::Stream::default_stream());
    for (int i = 0; i < 3; ++i) {
      opt.zero_grad();
      step();
    }
    opt.zero_grad();  // gradients are allocated inside the capture, from the graph's pool
    graph.capture_begin();
    step();
    graph.capture_end();
  }
  return time_ms([&] { graph.replay(); }, 2000);
}

// The tutorial's training step: Linear(10, 1), batch 32, MSE loss, Adam (or SGD), in ms.
double training_step_ms(bool adam) {
  manual_seed(0);
  nn::Linear model(10, 1);
  model->to(kGpu);
  Tensor x = randn({32, 10}, gpu()), y = randn({32, 1}, gpu());
  std::unique_ptr<optim::Optimizer> opt;
  if (adam)
    opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions{.lr = 1e-3});
  else
    opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions{.lr = 1e-3});
  return time_ms(
      [&] {
        opt->zero_grad();
        Tensor loss = F::mse_loss(model(x), y);
        loss.backward();
        opt->step();
      },
      2000);
}

// Fused causal attention, forward and forward + backward, bfloat16 and float32: q, k, v
// (4, 16, 2048, 64). TFLOP/s counts the causal half of seven L x S x E products: two forward,
// five backward (the scores recomputed); scripts/gpu-check.sh counts PyTorch's SDPA alike.
void bench_attention() {
  const int64_t n = 4, h = 16, l = 2048, e = 64;
  const double fwd_flop = 2.0 * 2 * n * h * l * l * e / 2;
  for (DType dt : {kBFloat16, kFloat32}) {
    const std::string name = dt == kBFloat16 ? "bf16" : "fp32";
    Tensor q = randn({n, h, l, e}, gpu(dt)).requires_grad_(true);
    Tensor k = randn({n, h, l, e}, gpu(dt)).requires_grad_(true);
    Tensor v = randn({n, h, l, e}, gpu(dt)).requires_grad_(true);
    F::ScaledDotProductAttentionOptions causal{.is_causal = true};
    double fwd_ms = time_ms(
        [&] {
          NoGradGuard ng;
          F::scaled_dot_product_attention(q, k, v, causal);
        },
        20);
    row("sdpa_causal_fwd_" + name, "ms", fwd_ms);
    Tensor go = randn({n, h, l, e}, gpu(dt));
    double fwd_bwd_ms = time_ms(
        [&] {
          Tensor o = F::scaled_dot_product_attention(q, k, v, causal);
          o.backward(go);
          q.mutable_grad() = Tensor();
          k.mutable_grad() = Tensor();
          v.mutable_grad() = Tensor();
        },
        10);
    row("sdpa_causal_fwd_bwd_" + name, "ms", fwd_bwd_ms);
    row("sdpa_causal_fwd_bwd_" + name + "_tflops", "TFLOP/s", 3.5 * fwd_flop / (fwd_bwd_ms * 1e9));
  }
  cuda::empty_cache();
}

int bench() {
  Tensor a = randn({4096, 4096}, gpu()), v = randn({1 << 26}, gpu()),
         s = randn({4096, 4096}, gpu());
  row("matmul_4096_fp32", "ms", time_ms([&] { mm(a, a); }, 20));
  row("add_64M_fp32", "ms", time_ms([&] { v + v; }, 50));
  row("sum_64M_fp32", "ms", time_ms([&] { sum(v); }, 50));
  row("softmax_4096x4096_fp32", "ms", time_ms([&] { softmax(s, 1); }, 50));
  double flop = 2.0 * 4096 * 4096 * 4096;
  row("sgemm_4096_fp32", "TFLOP/s", flop / (time_ms([&] { mm(a, a); }, 20) * 1e9));
  set_float32_matmul_precision("high");
  row("sgemm_4096_tf32", "TFLOP/s", flop / (time_ms([&] { mm(a, a); }, 50) * 1e9));
  set_float32_matmul_precision("highest");
  {  // 16-bit GEMM on tensor cores at 8192
    Tensor h = randn({8192, 8192}, gpu()).to(kBFloat16);
    const double flop8k = 2.0 * 8192 * 8192 * 8192;
    row("gemm_8192_bf16", "TFLOP/s", flop8k / (time_ms([&] { mm(h, h); }, 20) * 1e9));
    Tensor f = h.to(kFloat16);
    row("gemm_8192_fp16", "TFLOP/s", flop8k / (time_ms([&] { mm(f, f); }, 20) * 1e9));
  }
  // Device-to-device copy against element-wise add on 256 MiB operands: bytes moved per second
  // (copy reads and writes n floats, add reads two and writes one).
  Tensor src = randn({1 << 26}, gpu()), dst = empty({1 << 26}, gpu());
  double bytes = 4.0 * (1 << 26);
  double copy_gbs = 2 * bytes / (time_ms([&] { dst.copy_(src); }, 50) * 1e6);
  double add_gbs = 3 * bytes / (time_ms([&] { src + dst; }, 50) * 1e6);
  row("d2d_copy_256MB", "GB/s", copy_gbs);
  row("add_256MB", "GB/s", add_gbs);
  row("add_vs_copy_bandwidth", "%", 100 * add_gbs / copy_gbs);
  bench_attention();
  row("train_step_linear_adam", "ms", training_step_ms(true));
  row("train_step_linear_sgd", "ms", training_step_ms(false));
  row("train_step_linear_sgd_graph", "ms", graph_training_step_ms());
  bench_copies();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  static FakeCuda fake_backend;
  bool bench_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fake") == 0) {
      fake = true;
    } else if (std::strcmp(argv[i], "--bench") == 0) {
      bench_only = true;
    } else if (std::strcmp(argv[i], "--op-table-large-only") == 0) {
      large_samples_only = true;
    } else {
      std::fprintf(stderr, "usage: %s [--fake] [--bench] [--op-table-large-only]\n", argv[0]);
      return 2;
    }
  }
  if (fake) register_backend(kCUDA, &fake_backend);
  if (!cuda::is_available()) {
    std::printf("SKIP no CUDA device\n");
    return 77;
  }
  if (bench_only) return bench();
  std::printf("device: %s\n", cuda::get_device_name(0).c_str());
  manual_seed(42);
  for (auto [name, f] : std::vector<std::pair<const char*, void (*)()>>{
           {"copies", copies},
           {"op table", op_table_rows},
           {"elementwise", elementwise},
           {"reductions", reductions},
           {"linear algebra", linear_algebra},
           {"softmax, conv, index", softmax_conv_index},
           {"16-bit attention", attention_half},
           {"random", random_numbers},
           {"optimizers", optimizers},
           {"files and dlpack", files_and_dlpack},
           {"training and runtime", training_and_runtime}})
    guarded(name, f);
  if (!fake) cuda::synchronize();
  std::printf("SUMMARY %d passed, %d failed\n", passes, failures);
  return failures == 0 ? 0 : 1;
}
