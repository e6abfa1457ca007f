// tests/test_attention_fused.cpp: the fused attention kernels behind
// F::scaled_dot_product_attention against its math path (values and the gradients of query, key
// and value) over a table of shapes, masks and options -- tiles cut short, L != S, single rows
// and keys, causal, bool and additive masks broadcast, grouped heads, E != Ev, transposed views,
// 2-, 3- and 5-D inputs, rows without keys -- plus gradcheck in float64, dropout (the CPU
// kernels draw what the math path's dropout draws), results that do not depend on the thread
// count, checks that the fused path is the one taken, and on a GPU the bfloat16 / float16
// tensor-core kernels against the float32 math path.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/backend.h"
#include "ember/cuda.h"
#include "ember/settings.h"
#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_close;

class AttentionFusedTest : public testing::DeviceTest {};

constexpr const char* kFusedNode = "ScaledDotProductFlashAttentionBackward0";

enum class Mask { None, Bool, BoolRowsEmpty, FloatLS, FloatKeys, FloatRowsEmpty };

struct Case {
  const char* name;
  Shape q, k, v;
  Mask mask = Mask::None;
  bool causal = false, gqa = false, transposed = false;
  std::optional<double> scale{};
};

// The mask of a case for scores of shape `scores` (N..., Hq, L, S).
Tensor make_mask(Mask kind, const Shape& scores, const TensorOptions& o) {
  const int64_t d = static_cast<int64_t>(scores.size());
  const int64_t L = scores[d - 2], S = scores[d - 1];
  Shape lead(scores.begin(), scores.end() - 2);
  switch (kind) {
    case Mask::None:
      return Tensor();
    case Mask::Bool: {  // (N, 1, L, S) or (L, S) for inputs without heads
      Shape s = d >= 4 ? Shape{scores[0], 1, L, S} : Shape{L, S};
      Tensor keep = rand(s, o) > 0.3;
      keep.select(-1, 0).fill_(true);
      return keep;
    }
    case Mask::BoolRowsEmpty: {  // (L, S), every third row without a key
      Tensor keep = rand({L, S}, o) > 0.5;
      for (int64_t i = 0; i < L; i += 3) keep.select(0, i).fill_(false);
      return keep;
    }
    case Mask::FloatLS:  // (1, 1, L, S)
      return randn({1, 1, L, S}, o);
    case Mask::FloatKeys:  // (N, 1, 1, S): key padding
      return randn({scores[0], 1, 1, S}, o);
    case Mask::FloatRowsEmpty: {
      Tensor add = randn({L, S}, o);
      for (int64_t i = 1; i < L; i += 4) add.select(0, i).fill_(-INFINITY);
      return add;
    }
  }
  return Tensor();
}

// A tensor of `shape` whose last three dims are stored as (L, H, E): the transposed view an
// attention layer makes from (N, L, H, E).
Tensor strided_input(const Shape& shape, bool transposed, const TensorOptions& o) {
  if (!transposed || shape.size() < 3) return randn(shape, o);
  Shape stored = shape;
  std::swap(stored[stored.size() - 3], stored[stored.size() - 2]);
  const int64_t d = static_cast<int64_t>(shape.size());
  return randn(stored, o).transpose(d - 3, d - 2);
}

std::vector<Case> cases() {
  return {
      {"plain_ragged_tiles", {2, 3, 70, 16}, {2, 3, 100, 16}, {2, 3, 100, 24}},
      {"scale",
       {1, 2, 65, 8},
       {1, 2, 129, 8},
       {1, 2, 129, 8},
       Mask::None,
       false,
       false,
       false,
       0.3},
      {"causal_square", {2, 2, 130, 16}, {2, 2, 130, 16}, {2, 2, 130, 16}, Mask::None, true},
      {"causal_L_lt_S", {1, 2, 70, 8}, {1, 2, 150, 8}, {1, 2, 150, 12}, Mask::None, true},
      {"causal_L_gt_S", {1, 2, 150, 8}, {1, 2, 70, 8}, {1, 2, 70, 8}, Mask::None, true},
      {"L1_S1", {2, 2, 1, 8}, {2, 2, 1, 8}, {2, 2, 1, 8}},
      {"L1", {2, 2, 1, 8}, {2, 2, 90, 8}, {2, 2, 90, 8}},
      {"S1_causal", {1, 2, 80, 8}, {1, 2, 1, 8}, {1, 2, 1, 4}, Mask::None, true},
      {"bool_mask", {2, 2, 67, 8}, {2, 2, 75, 8}, {2, 2, 75, 8}, Mask::Bool},
      {"bool_rows_empty", {2, 2, 67, 8}, {2, 2, 75, 8}, {2, 2, 75, 8}, Mask::BoolRowsEmpty},
      {"float_mask_LS", {2, 2, 67, 8}, {2, 2, 75, 8}, {2, 2, 75, 8}, Mask::FloatLS},
      {"float_mask_keys", {3, 2, 67, 8}, {3, 2, 75, 8}, {3, 2, 75, 8}, Mask::FloatKeys},
      {"float_rows_empty", {1, 2, 67, 8}, {1, 2, 75, 8}, {1, 2, 75, 8}, Mask::FloatRowsEmpty},
      {"gqa", {2, 6, 65, 8}, {2, 2, 90, 8}, {2, 2, 90, 8}, Mask::None, false, true},
      {"gqa_causal_mask_free",
       {1, 4, 100, 8},
       {1, 1, 100, 8},
       {1, 1, 100, 16},
       Mask::None,
       true,
       true},
      {"gqa_bool", {2, 4, 30, 8}, {2, 2, 40, 8}, {2, 2, 40, 8}, Mask::Bool, false, true},
      {"transposed", {2, 3, 70, 16}, {2, 3, 90, 16}, {2, 3, 90, 16}, Mask::None, true, false, true},
      {"transposed_float_mask",
       {2, 3, 70, 16},
       {2, 3, 90, 16},
       {2, 3, 90, 16},
       Mask::FloatLS,
       false,
       false,
       true},
      {"three_d", {4, 67, 8}, {4, 80, 8}, {4, 80, 8}, Mask::Bool},
      {"two_d", {70, 8}, {66, 8}, {66, 8}, Mask::None, true},
      {"five_d", {2, 2, 3, 33, 8}, {2, 2, 3, 40, 8}, {2, 2, 3, 40, 8}, Mask::BoolRowsEmpty},
      // Head dims of the CUDA kernels' widths: 16-byte row loads, several key tiles.
      {"heads_64_causal", {1, 2, 130, 64}, {1, 2, 150, 64}, {1, 2, 150, 64}, Mask::None, true},
      {"heads_64_transposed",
       {2, 2, 70, 64},
       {2, 2, 140, 64},
       {2, 2, 140, 64},
       Mask::FloatKeys,
       false,
       false,
       true},
      {"heads_62_gqa", {1, 4, 70, 62}, {1, 2, 80, 62}, {1, 2, 80, 62}, Mask::None, true, true},
      {"heads_96_128", {1, 2, 70, 96}, {1, 2, 80, 96}, {1, 2, 80, 128}, Mask::BoolRowsEmpty},
  };
}

// The fused path's output and gradients against the math path's, for one case and dtype.
void expect_matches_math(const Case& c, const TensorOptions& o, double tol) {
  SCOPED_TRACE(c.name);
  Tensor q = strided_input(c.q, c.transposed, o).requires_grad_(true);
  Tensor k = strided_input(c.k, c.transposed, o).requires_grad_(true);
  Tensor v = strided_input(c.v, c.transposed, o).requires_grad_(true);
  Shape scores(c.q.begin(), c.q.end() - 1);
  scores.push_back(c.k[c.k.size() - 2]);
  Tensor mask = make_mask(c.mask, scores, o);
  F::ScaledDotProductAttentionOptions opt{
      .attn_mask = mask, .is_causal = c.causal, .scale = c.scale, .enable_gqa = c.gqa};
  Tensor fused = F::scaled_dot_product_attention(q, k, v, opt);
  Tensor math = F::scaled_dot_product_attention_math(q, k, v, opt);
  ASSERT_TRUE(fused.grad_fn());
  EXPECT_EQ(fused.grad_fn()->name(), kFusedNode);
  EXPECT_TRUE(tensor_close(fused, math, tol, tol));
  Tensor g = randn(fused.sizes(), o);
  std::vector<Tensor> gf = autograd::grad({fused}, {q, k, v}, {g});
  std::vector<Tensor> gm = autograd::grad({math}, {q, k, v}, {g});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(tensor_close(gf[i], gm[i], tol, tol)) << "input " << i;
}

TEST_P(AttentionFusedTest, MatchesTheMathPathFloat32) {
  manual_seed(11);
  for (const Case& c : cases()) expect_matches_math(c, on(kFloat32), 2e-4);
}

TEST_P(AttentionFusedTest, MatchesTheMathPathFloat64) {
  if (device().is_cuda())
    GTEST_SKIP() << "the CUDA kernels are float32: float64 takes the math path";
  manual_seed(12);
  for (const Case& c : cases()) expect_matches_math(c, on(kFloat64), 1e-10);
}

TEST_P(AttentionFusedTest, GradcheckFloat64) {
  if (device().is_cuda())
    GTEST_SKIP() << "the CUDA kernels are float32: float64 takes the math path";
  manual_seed(13);
  for (const Case& c : std::vector<Case>{
           {"plain", {1, 2, 3, 2}, {1, 2, 4, 2}, {1, 2, 4, 3}},
           {"causal", {1, 2, 4, 2}, {1, 2, 3, 2}, {1, 2, 3, 2}, Mask::None, true},
           {"bool", {2, 1, 3, 2}, {2, 1, 4, 2}, {2, 1, 4, 2}, Mask::Bool},
           {"float_empty_rows", {1, 1, 5, 2}, {1, 1, 4, 2}, {1, 1, 4, 2}, Mask::FloatRowsEmpty},
           {"gqa", {1, 4, 3, 2}, {1, 2, 4, 2}, {1, 2, 4, 2}, Mask::None, true, true},
       }) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> x = {randn(c.q, on(kFloat64)).requires_grad_(true),
                             randn(c.k, on(kFloat64)).requires_grad_(true),
                             randn(c.v, on(kFloat64)).requires_grad_(true)};
    Shape scores(c.q.begin(), c.q.end() - 1);
    scores.push_back(c.k[c.k.size() - 2]);
    F::ScaledDotProductAttentionOptions opt{.attn_mask = make_mask(c.mask, scores, on(kFloat64)),
                                            .is_causal = c.causal,
                                            .enable_gqa = c.gqa};
    EXPECT_EQ(F::scaled_dot_product_attention(x[0], x[1], x[2], opt).grad_fn()->name(), kFusedNode);
    EXPECT_TRUE(autograd::gradcheck(
        [&](const std::vector<Tensor>& t) {
          return F::scaled_dot_product_attention(t[0], t[1], t[2], opt);
        },
        x));
  }
}

// Rows without any visible key: zeros and zero gradients, no NaN.
TEST_P(AttentionFusedTest, RowsWithoutKeysGiveZerosAndZeroGradients) {
  manual_seed(14);
  Tensor q = randn({1, 2, 70, 8}, on()).requires_grad_(true);
  Tensor k = randn({1, 2, 80, 8}, on()).requires_grad_(true);
  Tensor v = randn({1, 2, 80, 8}, on()).requires_grad_(true);
  Tensor keep = ones({70, 80}, on(kBool));
  keep.select(0, 5).fill_(false);
  keep.select(0, 66).fill_(false);
  Tensor out = F::scaled_dot_product_attention(q, k, v, {.attn_mask = keep});
  EXPECT_EQ(out.grad_fn()->name(), kFusedNode);
  out.sum().backward();
  for (int64_t row : {5, 66}) {
    EXPECT_TRUE(tensor_close(out.select(2, row), zeros({1, 2, 8}, on())));
    EXPECT_TRUE(tensor_close(q.grad().select(2, row), zeros({1, 2, 8}, on())));
  }
  for (const Tensor& g : {q.grad(), k.grad(), v.grad()})
    EXPECT_TRUE(isfinite(g).all().item<bool>());
}

// With dropout the CPU kernels drop the weights that dropout(weights, p) drops after the same
// seed -- the same Philox draws, element by element -- so the fused output and gradients equal
// the math path's; a float32 and a float64 run of each case. On CUDA dropout takes the math path.
TEST_P(AttentionFusedTest, DropoutDrawsWhatTheMathPathDraws) {
  const bool fused_here = device().is_cpu();
  manual_seed(20);
  std::vector<Case> all = cases();
  for (const Case& c : all) {
    const std::string name = c.name;
    if (name != "plain_ragged_tiles" && name != "causal_L_gt_S" && name != "bool_rows_empty" &&
        name != "float_rows_empty" && name != "gqa_bool" && name != "two_d" && name != "five_d")
      continue;
    for (DType d : {kFloat32, kFloat64}) {
      SCOPED_TRACE(name + " " + dtype_name(d));
      const double tol = d == kFloat32 ? 2e-4 : 1e-10;
      Tensor q = strided_input(c.q, c.transposed, on(d)).requires_grad_(true);
      Tensor k = strided_input(c.k, c.transposed, on(d)).requires_grad_(true);
      Tensor v = strided_input(c.v, c.transposed, on(d)).requires_grad_(true);
      Shape scores(c.q.begin(), c.q.end() - 1);
      scores.push_back(c.k[c.k.size() - 2]);
      F::ScaledDotProductAttentionOptions opt{.attn_mask = make_mask(c.mask, scores, on(d)),
                                              .dropout_p = 0.3,
                                              .is_causal = c.causal,
                                              .enable_gqa = c.gqa};
      manual_seed(21);
      Tensor fused = F::scaled_dot_product_attention(q, k, v, opt);
      manual_seed(21);
      Tensor math = F::scaled_dot_product_attention_math(q, k, v, opt);
      ASSERT_TRUE(fused.grad_fn());
      EXPECT_EQ(fused.grad_fn()->name() == std::string(kFusedNode), fused_here);
      EXPECT_TRUE(tensor_close(fused, math, tol, tol));
      // Dropout changed something, and the next call draws anew.
      F::ScaledDotProductAttentionOptions no_drop = opt;
      no_drop.dropout_p = 0;
      EXPECT_FALSE(tensor_close(fused, F::scaled_dot_product_attention(q, k, v, no_drop)));
      EXPECT_FALSE(tensor_close(fused, F::scaled_dot_product_attention(q, k, v, opt)));
      Tensor g = randn(fused.sizes(), on(d));
      std::vector<Tensor> gf = autograd::grad({fused}, {q, k, v}, {g});
      std::vector<Tensor> gm = autograd::grad({math}, {q, k, v}, {g});
      for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(tensor_close(gf[i], gm[i], tol, tol)) << "input " << i;
    }
  }
}

// Each task of the CPU kernels runs alone in a fixed order and each dropout draw belongs to its
// element: one thread or two, the same bits.
TEST_P(AttentionFusedTest, ResultsDoNotDependOnTheThreadCount) {
  if (device().is_cuda() && !testing::fake_cuda_backend())
    GTEST_SKIP() << "the CUDA backward adds dQ with atomics";
  manual_seed(15);
  Tensor q = randn({2, 3, 130, 16}, on()).requires_grad_(true);
  Tensor k = randn({2, 3, 130, 16}, on()).requires_grad_(true);
  Tensor v = randn({2, 3, 130, 16}, on()).requires_grad_(true);
  Tensor g = randn({2, 3, 130, 16}, on());
  auto run = [&](int threads) {
    set_num_threads(threads);
    manual_seed(22);
    Tensor out = F::scaled_dot_product_attention(q, k, v, {.dropout_p = 0.2, .is_causal = true});
    std::vector<Tensor> grads = autograd::grad({out}, {q, k, v}, {g});
    grads.push_back(out);
    return grads;
  };
  const int before = get_num_threads();
  std::vector<Tensor> one = run(1), two = run(2);
  set_num_threads(before);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(testing::tensor_equal(one[i], two[i])) << i;
}

// 16-bit inputs go through the float32 kernels and keep their dtype (on the CPU, and on CUDA for
// head dims the tensor-core kernels do not take, as these 8).
TEST_P(AttentionFusedTest, HalfPrecisionGoesThroughFloat32) {
  manual_seed(16);
  Tensor q = randn({2, 2, 70, 8}, on()), k = randn({2, 2, 70, 8}, on()),
         v = randn({2, 2, 70, 8}, on());
  Tensor ref = F::scaled_dot_product_attention_math(q, k, v, {.is_causal = true});
  for (DType d : {kBFloat16, kFloat16}) {
    Tensor qd = q.to(d).requires_grad_(true);
    Tensor out = F::scaled_dot_product_attention(qd, k.to(d), v.to(d), {.is_causal = true});
    EXPECT_EQ(out.dtype(), d);
    EXPECT_TRUE(tensor_close(out, ref, 2e-2, 2e-2)) << d;
    out.sum().backward();
    EXPECT_EQ(qd.grad().dtype(), d);
  }
}

// A 16-bit tensor of `shape` from float32 normals: stored as (L, H, E) in its last three dims
// (transposed), or with its last dim strided (columns_apart: stored as (..., E, L)), else
// contiguous.
Tensor half_input(const Shape& shape, DType dtype, bool transposed, bool columns_apart,
                  const TensorOptions& o) {
  const int64_t d = static_cast<int64_t>(shape.size());
  Shape stored = shape;
  if (columns_apart) {
    std::swap(stored[d - 2], stored[d - 1]);
    return randn(stored, o).to(dtype).transpose(d - 2, d - 1);
  }
  if (transposed && d >= 3) {
    std::swap(stored[d - 3], stored[d - 2]);
    return randn(stored, o).to(dtype).transpose(d - 3, d - 2);
  }
  return randn(shape, o).to(dtype);
}

// One case on the tensor-core kernels: the fused node makes the 16-bit output itself (no float32
// copy of the inputs and no conversion after it), and the output and the gradients are close to
// the float32 math path on the same values.
void expect_half_matches_float32(const Case& c, DType dtype, bool columns_apart,
                                 const TensorOptions& o32) {
  SCOPED_TRACE(std::string(c.name) + " " + dtype_name(dtype));
  const double tol = dtype == kBFloat16 ? 3e-2 : 6e-3,
               grad_tol = dtype == kBFloat16 ? 6e-2 : 1.5e-2;
  Tensor q = half_input(c.q, dtype, c.transposed, columns_apart, o32).requires_grad_(true);
  Tensor k = half_input(c.k, dtype, c.transposed, columns_apart, o32).requires_grad_(true);
  Tensor v = half_input(c.v, dtype, c.transposed, columns_apart, o32).requires_grad_(true);
  Shape scores(c.q.begin(), c.q.end() - 1);
  scores.push_back(c.k[c.k.size() - 2]);
  Tensor mask = make_mask(c.mask, scores, o32);
  if (mask.defined() && mask.dtype() != kBool) mask = mask.to(dtype);
  F::ScaledDotProductAttentionOptions opt{
      .attn_mask = mask, .is_causal = c.causal, .scale = c.scale, .enable_gqa = c.gqa};
  Tensor out = F::scaled_dot_product_attention(q, k, v, opt);
  EXPECT_EQ(out.dtype(), dtype);
  ASSERT_TRUE(out.grad_fn());
  EXPECT_EQ(out.grad_fn()->name(), kFusedNode);
  if (c.q.size() == 4) {  // 4-D leaves reach the kernels as they are (others through a reshape)
    for (const autograd::Edge& e : out.grad_fn()->next_edges()) {
      if (e.fn) {
        EXPECT_EQ(e.fn->name(), "AccumulateGrad");
      }
    }
  }
  // The reference: the math path in float32 on the 16-bit values.
  Tensor q32 = q.detach().to(kFloat32).requires_grad_(true);
  Tensor k32 = k.detach().to(kFloat32).requires_grad_(true);
  Tensor v32 = v.detach().to(kFloat32).requires_grad_(true);
  F::ScaledDotProductAttentionOptions opt32 = opt;
  if (mask.defined() && mask.dtype() != kBool) opt32.attn_mask = mask.to(kFloat32);
  Tensor ref = F::scaled_dot_product_attention_math(q32, k32, v32, opt32);
  EXPECT_TRUE(tensor_close(out, ref, tol, tol));
  Tensor g = randn(out.sizes(), o32).to(dtype);
  std::vector<Tensor> got = autograd::grad({out}, {q, k, v}, {g});
  std::vector<Tensor> want = autograd::grad({ref}, {q32, k32, v32}, {g.to(kFloat32)});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].dtype(), dtype) << "input " << i;
    EXPECT_TRUE(tensor_close(got[i], want[i], grad_tol, grad_tol)) << "input " << i;
  }
}

// On a GPU, 16-bit inputs whose head dims are multiples of 16 up to 128 go through the
// tensor-core kernels as they are (cuda_attention_half.cu), over the shapes, masks and options
// the float32 kernels take; the forward allocates no float32 copy of its inputs. Heads of 128 are
// left out on GPUs whose shared memory cannot hold their tiles (sm_86 / sm_89); every sm_80+
// GPU takes heads of 64.
TEST_P(AttentionFusedTest, HalfPrecisionOnTensorCores) {
  if (!device().is_cuda() || testing::fake_cuda_backend())
    GTEST_SKIP() << "the tensor-core kernels need a GPU";
  auto taken = [](const Case& c) {
    return backend_for(kCUDA).takes_half_attention(c.q.back(), c.v.back(), -1);
  };
  ASSERT_TRUE(taken({"64", {1, 1, 1, 64}, {1, 1, 1, 64}, {1, 1, 1, 64}}));
  manual_seed(19);
  const std::vector<Case> half_cases = {
      {"plain_ragged_tiles", {2, 3, 130, 64}, {2, 3, 100, 64}, {2, 3, 100, 64}},
      {"scale",
       {1, 2, 65, 16},
       {1, 2, 129, 16},
       {1, 2, 129, 16},
       Mask::None,
       false,
       false,
       false,
       0.3},
      {"causal_square", {2, 2, 150, 32}, {2, 2, 150, 32}, {2, 2, 150, 32}, Mask::None, true},
      {"causal_L_lt_S", {1, 2, 70, 16}, {1, 2, 150, 16}, {1, 2, 150, 48}, Mask::None, true},
      {"causal_L_gt_S", {1, 2, 150, 32}, {1, 2, 70, 32}, {1, 2, 70, 32}, Mask::None, true},
      {"L1_S1", {2, 2, 1, 16}, {2, 2, 1, 16}, {2, 2, 1, 16}},
      {"bool_mask", {2, 2, 67, 32}, {2, 2, 75, 32}, {2, 2, 75, 32}, Mask::Bool},
      {"bool_rows_empty", {2, 2, 67, 32}, {2, 2, 75, 32}, {2, 2, 75, 32}, Mask::BoolRowsEmpty},
      {"float_mask_LS", {2, 2, 67, 32}, {2, 2, 75, 32}, {2, 2, 75, 32}, Mask::FloatLS},
      {"float_mask_keys", {3, 2, 67, 32}, {3, 2, 75, 32}, {3, 2, 75, 32}, Mask::FloatKeys},
      {"float_rows_empty", {1, 2, 67, 32}, {1, 2, 75, 32}, {1, 2, 75, 32}, Mask::FloatRowsEmpty},
      {"gqa", {2, 6, 65, 32}, {2, 2, 90, 32}, {2, 2, 90, 32}, Mask::None, false, true},
      {"gqa_causal_E_ne_Ev",
       {1, 4, 100, 32},
       {1, 1, 100, 32},
       {1, 1, 100, 64},
       Mask::None,
       true,
       true},
      {"gqa_bool", {2, 4, 30, 16}, {2, 2, 40, 16}, {2, 2, 40, 16}, Mask::Bool, false, true},
      {"E_ne_Ev_128", {2, 2, 70, 128}, {2, 2, 90, 128}, {2, 2, 90, 16}},
      {"transposed_float_mask",
       {2, 3, 70, 128},
       {2, 3, 90, 128},
       {2, 3, 90, 128},
       Mask::FloatLS,
       false,
       false,
       true},
      {"three_d", {4, 67, 32}, {4, 80, 32}, {4, 80, 32}, Mask::Bool},
  };
  for (DType d : {kBFloat16, kFloat16}) {
    for (const Case& c : half_cases)
      if (taken(c)) expect_half_matches_float32(c, d, false, on(kFloat32));
    // Columns apart (last stride != 1): the tiles load element by element.
    expect_half_matches_float32(
        {"columns_apart", {2, 2, 70, 32}, {2, 2, 90, 32}, {2, 2, 90, 48}, Mask::None, true}, d,
        true, on(kFloat32));
  }
  // Under autocast a float32 additive mask stays float32 and the kernels read it as it is.
  {
    Tensor q = randn({2, 2, 70, 64}, on()).requires_grad_(true), k = randn({2, 2, 90, 64}, on()),
           v = randn({2, 2, 90, 64}, on()), add = randn({70, 90}, on());
    Tensor ref = F::scaled_dot_product_attention_math(q, k, v, {.attn_mask = add});
    Tensor out;
    {
      AutocastGuard autocast(device().type(), kBFloat16);
      out = F::scaled_dot_product_attention(q, k, v, {.attn_mask = add});
    }
    EXPECT_EQ(out.dtype(), kBFloat16);
    EXPECT_TRUE(tensor_close(out, ref, 3e-2, 3e-2));
  }
  // No float32 copy: the forward's peak stays under the size q would have in float32 (its
  // output, 16-bit, and the float32 logsumexp are all it allocates).
  Tensor q = randn({4, 8, 512, 64}, on()).to(kBFloat16).requires_grad_(true);
  Tensor k = randn({4, 8, 512, 64}, on()).to(kBFloat16).requires_grad_(true);
  Tensor v = randn({4, 8, 512, 64}, on()).to(kBFloat16).requires_grad_(true);
  cuda::synchronize();
  cuda::reset_peak_memory_stats();
  const size_t base = cuda::memory_allocated();
  Tensor out = F::scaled_dot_product_attention(q, k, v, {.is_causal = true});
  cuda::synchronize();
  EXPECT_LT(cuda::max_memory_allocated() - base, static_cast<size_t>(q.numel()) * sizeof(float));
  EXPECT_EQ(out.grad_fn()->name(), kFusedNode);
}

// Under autocast the operands are lowered to the autocast dtype and go through the fused kernel
// (in float32): a 16-bit result close to float32 attention, with float32 gradients for float32
// inputs.
TEST_P(AttentionFusedTest, AutocastTakesTheFusedPath) {
  manual_seed(18);
  Tensor q = randn({2, 2, 70, 8}, on()).requires_grad_(true), k = randn({2, 2, 70, 8}, on()),
         v = randn({2, 2, 70, 8}, on());
  Tensor ref = F::scaled_dot_product_attention_math(q, k, v, {.is_causal = true});
  const DType low = device().is_cuda() ? kFloat16 : kBFloat16;
  Tensor out;
  {
    AutocastGuard autocast(device().type(), low);
    out = F::scaled_dot_product_attention(q, k, v, {.is_causal = true});
  }
  EXPECT_EQ(out.dtype(), low);
  EXPECT_TRUE(tensor_close(out, ref, 3e-2, 3e-2));
  // The fused node is in the graph, under the conversion of its 16-bit result.
  std::vector<std::string> names;
  std::vector<autograd::Node*> stack{out.grad_fn().get()};
  while (!stack.empty()) {
    autograd::Node* node = stack.back();
    stack.pop_back();
    names.push_back(node->name());
    for (const autograd::Edge& e : node->next_edges())
      if (e.fn) stack.push_back(e.fn.get());
  }
  EXPECT_NE(std::find(names.begin(), names.end(), kFusedNode), names.end());
  out.to(kFloat32).sum().backward();
  EXPECT_EQ(q.grad().dtype(), kFloat32);
}

// What the fused kernels do not take goes through the math path.
TEST_P(AttentionFusedTest, OtherCasesTakeTheMathPath) {
  manual_seed(17);
  Tensor q = randn({2, 2, 8, 4}, on()).requires_grad_(true), k = randn({2, 2, 8, 4}, on()),
         v = randn({2, 2, 8, 4}, on());
  if (!device().is_cpu()) {
    EXPECT_NE(F::scaled_dot_product_attention(q, k, v, {.dropout_p = 0.5}).grad_fn()->name(),
              kFusedNode);
  }
  // A mask that requires grad gets its gradient from the math path.
  Tensor add = randn({8, 8}, on()).requires_grad_(true);
  Tensor out = F::scaled_dot_product_attention(q, k, v, {.attn_mask = add});
  EXPECT_NE(out.grad_fn()->name(), kFusedNode);
  out.sum().backward();
  EXPECT_TRUE(add.grad().defined());
  // Key and value broadcast over the batch.
  Tensor k1 = randn({1, 2, 8, 4}, on());
  EXPECT_NE(F::scaled_dot_product_attention(q, k1, k1).grad_fn()->name(), kFusedNode);
  EXPECT_TRUE(tensor_close(F::scaled_dot_product_attention(q, k1, k1),
                           F::scaled_dot_product_attention_math(q, k1, k1), 1e-5, 1e-5));
}

// On a GPU the fused path's peak memory stays far below the (B, H, L, S) scores the math path
// holds (64 MiB here).
TEST_P(AttentionFusedTest, DoesNotAllocateTheScores) {
  if (!device().is_cuda() || testing::fake_cuda_backend())
    GTEST_SKIP() << "memory statistics need a GPU";
  Tensor q = randn({4, 4, 1024, 16}, on()).requires_grad_(true);
  Tensor k = randn({4, 4, 1024, 16}, on()).requires_grad_(true);
  Tensor v = randn({4, 4, 1024, 16}, on()).requires_grad_(true);
  cuda::synchronize();
  cuda::reset_peak_memory_stats();
  const size_t base = cuda::memory_allocated();
  Tensor out = F::scaled_dot_product_attention(q, k, v, {.is_causal = true});
  out.sum().backward();
  cuda::synchronize();
  EXPECT_LT(cuda::max_memory_allocated() - base, size_t{16} << 20);
}

EMBER_INSTANTIATE_DEVICE_TESTS(AttentionFusedTest);

}  // namespace
}  // namespace ember
