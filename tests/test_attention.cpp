// tests/test_attention.cpp: F::scaled_dot_product_attention against attention written out by
// hand in loops (no ember op in the reference): bool and additive masks broadcast over batch
// and heads, is_causal as the upper-left triangle when L != S, scale, grouped-query heads, rows
// without any key (zeros, finite gradients), dropout's expected value, gradcheck, and the errors.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_close;
using testing::throws_error;

class AttentionTest : public testing::DeviceTest {};

// softmax(q k^T scale + bias) v by loops. q: (B, Hq, L, E), k: (B, Hk, S, E), v: (B, Hk, S, Ev);
// allowed(b, h, i, j) and bias(b, h, i, j) give each score's mask and addend. A row with no
// allowed key gives zeros.
template <class Allowed, class Bias>
Tensor attention_by_hand(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                         Allowed allowed, Bias bias) {
  const int64_t B = q.size(0), Hq = q.size(1), L = q.size(2), E = q.size(3);
  const int64_t Hk = k.size(1), S = k.size(2), Ev = v.size(3);
  auto qv = q.cpu().to(kFloat64).contiguous().to_vector<double>();
  auto kv = k.cpu().to(kFloat64).contiguous().to_vector<double>();
  auto vv = v.cpu().to(kFloat64).contiguous().to_vector<double>();
  std::vector<double> out(static_cast<size_t>(B * Hq * L * Ev), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(static_cast<size_t>(S));
        double m = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          if (!allowed(b, h, i, j)) {
            s[j] = -INFINITY;
            continue;
          }
          double dot = 0;
          for (int64_t e = 0; e < E; ++e)
            dot += qv[((b * Hq + h) * L + i) * E + e] * kv[((b * Hk + hk) * S + j) * E + e];
          s[j] = dot * scale + bias(b, h, i, j);
          m = std::max(m, s[j]);
        }
        if (m == -INFINITY) continue;
        double z = 0;
        for (double& x : s) z += (x = std::exp(x - m));
        for (int64_t j = 0; j < S; ++j)
          for (int64_t e = 0; e < Ev; ++e)
            out[((b * Hq + h) * L + i) * Ev + e] += s[j] / z * vv[((b * Hk + hk) * S + j) * Ev + e];
      }
    }
  return from_vector<double>(out, Shape{B, Hq, L, Ev});
}

auto all_allowed = [](int64_t, int64_t, int64_t, int64_t) { return true; };
auto no_bias = [](int64_t, int64_t, int64_t, int64_t) { return 0.0; };

TEST_P(AttentionTest, MatchesAttentionByHand) {
  manual_seed(1);
  Tensor q = randn({2, 3, 5, 4}, on()), k = randn({2, 3, 7, 4}, on()),
         v = randn({2, 3, 7, 6}, on());
  Tensor out = F::scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(out.sizes(), (Shape{2, 3, 5, 6}));
  EXPECT_EQ(out.device().type(), device().type());
  EXPECT_TRUE(tensor_close(out, attention_by_hand(q, k, v, 0.5, all_allowed, no_bias), 1e-5, 1e-5));
  // A given scale replaces 1 / sqrt(E).
  Tensor scaled = F::scaled_dot_product_attention(q, k, v, {.scale = 0.3});
  EXPECT_TRUE(
      tensor_close(scaled, attention_by_hand(q, k, v, 0.3, all_allowed, no_bias), 1e-5, 1e-5));
}

TEST_P(AttentionTest, MasksBroadcastOverBatchAndHeads) {
  manual_seed(2);
  Tensor q = randn({2, 2, 4, 3}, on()), k = randn({2, 2, 5, 3}, on()),
         v = randn({2, 2, 5, 3}, on());
  // bool (B, 1, L, S): true takes part.
  Tensor keep = rand({2, 1, 4, 5}, on()) > 0.3;
  keep.select(3, 0).fill_(true);  // a key in every row
  auto kv = keep.cpu().contiguous().to_vector<bool>();
  auto allowed = [&](int64_t b, int64_t, int64_t i, int64_t j) { return kv[(b * 4 + i) * 5 + j]; };
  const double scale = 1 / std::sqrt(3.0);
  EXPECT_TRUE(tensor_close(F::scaled_dot_product_attention(q, k, v, {.attn_mask = keep}),
                           attention_by_hand(q, k, v, scale, allowed, no_bias), 1e-5, 1e-5));
  // additive (L, S) of the query's dtype.
  Tensor add = randn({4, 5}, on());
  auto av = add.cpu().to(kFloat64).contiguous().to_vector<double>();
  auto bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return av[i * 5 + j]; };
  EXPECT_TRUE(tensor_close(F::scaled_dot_product_attention(q, k, v, {.attn_mask = add}),
                           attention_by_hand(q, k, v, scale, all_allowed, bias), 1e-5, 1e-5));
}

// is_causal is torch.ones(L, S).tril(): query i sees keys 0..i, also when L != S.
TEST_P(AttentionTest, CausalIsTheUpperLeftTriangle) {
  manual_seed(3);
  for (auto [L, S] : {std::pair<int64_t, int64_t>{6, 6}, {3, 6}, {6, 3}}) {
    SCOPED_TRACE("L " + std::to_string(L) + ", S " + std::to_string(S));
    Tensor q = randn({1, 2, L, 4}, on()), k = randn({1, 2, S, 4}, on()),
           v = randn({1, 2, S, 4}, on());
    auto causal = [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i; };
    Tensor out = F::scaled_dot_product_attention(q, k, v, {.is_causal = true});
    EXPECT_TRUE(tensor_close(out, attention_by_hand(q, k, v, 0.5, causal, no_bias), 1e-5, 1e-5));
  }
}

TEST_P(AttentionTest, GroupedQueryHeadsShareKeysAndValues) {
  manual_seed(4);
  Tensor q = randn({2, 6, 3, 4}, on()), k = randn({2, 2, 5, 4}, on()),
         v = randn({2, 2, 5, 4}, on());
  Tensor out = F::scaled_dot_product_attention(q, k, v, {.enable_gqa = true});
  EXPECT_TRUE(tensor_close(out, attention_by_hand(q, k, v, 0.5, all_allowed, no_bias), 1e-5, 1e-5));
  EXPECT_TRUE(throws_error([&] { F::scaled_dot_product_attention(q, k, v); }, ErrorKind::Shape,
                           {"[matmul]"}));
  Tensor k4 = randn({2, 4, 5, 4}, on());
  EXPECT_TRUE(throws_error(
      [&] { F::scaled_dot_product_attention(q, k4, k4, {.enable_gqa = true}); }, ErrorKind::Shape,
      {"[scaled_dot_product_attention]", "query heads (6)", "multiple", "(4 and 4)"}));
}

// A row without any key gives zeros and a zero gradient, never NaN (PyTorch's _safe_softmax).
TEST_P(AttentionTest, RowsWithoutKeysGiveZeros) {
  manual_seed(5);
  Tensor q = randn({1, 1, 3, 2}, on(kFloat64)).requires_grad_(true);
  Tensor k = randn({1, 1, 4, 2}, on(kFloat64)).requires_grad_(true);
  Tensor v = randn({1, 1, 4, 2}, on(kFloat64)).requires_grad_(true);
  Tensor keep = ones({3, 4}, on(kBool));
  keep.select(0, 1).fill_(false);
  Tensor out = F::scaled_dot_product_attention(q, k, v, {.attn_mask = keep});
  EXPECT_TRUE(tensor_close(out.select(2, 1), zeros({1, 1, 2}, on(kFloat64))));
  out.sum().backward();
  for (const Tensor& g : {q.grad(), k.grad(), v.grad()})
    EXPECT_TRUE(isfinite(g).all().item<bool>()) << g;
  EXPECT_TRUE(tensor_close(q.grad().select(2, 1), zeros({1, 1, 2}, on(kFloat64))));
  // A float mask of -inf over a whole row is the same.
  Tensor minus_inf = zeros({3, 4}, on(kFloat64));
  minus_inf.select(0, 2).fill_(-std::numeric_limits<double>::infinity());
  Tensor out2 = F::scaled_dot_product_attention(q, k, v, {.attn_mask = minus_inf});
  EXPECT_TRUE(tensor_close(out2.select(2, 2), zeros({1, 1, 2}, on(kFloat64))));
}

TEST_P(AttentionTest, GradcheckThroughMasksAndCausal) {
  manual_seed(6);
  auto opts = on(kFloat64);
  std::vector<Tensor> x = {randn({1, 2, 3, 2}, opts).requires_grad_(true),
                           randn({1, 2, 4, 2}, opts).requires_grad_(true),
                           randn({1, 2, 4, 3}, opts).requires_grad_(true)};
  Tensor keep = rand({3, 4}, on()) > 0.4;
  keep.select(1, 0).fill_(true);
  Tensor add = randn({1, 1, 3, 4}, opts);
  for (int mode = 0; mode < 3; ++mode) {
    SCOPED_TRACE(mode);
    F::ScaledDotProductAttentionOptions o;
    if (mode == 0) o.attn_mask = keep;
    if (mode == 1) o.attn_mask = add;
    if (mode == 2) o.is_causal = true;
    EXPECT_TRUE(autograd::gradcheck(
        [&](const std::vector<Tensor>& t) {
          return F::scaled_dot_product_attention(t[0], t[1], t[2], o);
        },
        x));
  }
}

// Dropout scales kept weights by 1 / (1 - p): with values of ones each output is the kept weight
// mass times 2 for p = 0.5, 1 on average.
TEST_P(AttentionTest, DropoutKeepsTheExpectedValue) {
  manual_seed(7);
  Tensor q = randn({4, 4, 64, 8}, on()), k = randn({4, 4, 64, 8}, on());
  Tensor v = ones({4, 4, 64, 1}, on());
  Tensor out = F::scaled_dot_product_attention(q, k, v, {.dropout_p = 0.5});
  const double mean = out.mean().item<double>();
  EXPECT_NEAR(mean, 1.0, 0.05);
  EXPECT_GT(out.std().item<double>(), 0.05);  // not the undropped 1 everywhere
  EXPECT_TRUE(tensor_close(F::scaled_dot_product_attention(q, k, v), ones_like(out), 1e-5, 1e-5));
}

TEST_P(AttentionTest, HalfPrecisionFollowsFloat32) {
  manual_seed(8);
  Tensor q = randn({2, 2, 5, 8}, on()), k = randn({2, 2, 6, 8}, on()),
         v = randn({2, 2, 6, 8}, on());
  Tensor ref = F::scaled_dot_product_attention(q, k, v, {.is_causal = true});
  for (DType d : {kBFloat16, kFloat16}) {
    Tensor out = F::scaled_dot_product_attention(q.to(d), k.to(d), v.to(d), {.is_causal = true});
    EXPECT_EQ(out.dtype(), d);
    EXPECT_TRUE(tensor_close(out, ref, 2e-2, 2e-2)) << d;
  }
}

TEST_P(AttentionTest, ErrorsSayWhatToDo) {
  Tensor q = ones({1, 2, 3, 4}, on()), k = ones({1, 2, 5, 4}, on()), v = ones({1, 2, 5, 4}, on());
  const char* op = "[scaled_dot_product_attention]";
  EXPECT_TRUE(throws_error(
      [&] {
        F::scaled_dot_product_attention(q, k, v,
                                        {.attn_mask = ones({3, 5}, on(kBool)), .is_causal = true});
      },
      ErrorKind::Value, {op, "is_causal and attn_mask"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::scaled_dot_product_attention(q, ones({1, 2, 5, 3}, on()), v);
      },
      ErrorKind::Shape, {op, "embedding size E"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::scaled_dot_product_attention(q, k, ones({1, 2, 4, 4}, on()));
      },
      ErrorKind::Shape, {op, "sequence length S"}));
  EXPECT_TRUE(throws_error([&] { F::scaled_dot_product_attention(q, k.to(kFloat64), v); },
                           ErrorKind::DType, {op, "same dtype", "float32", "float64"}));
  EXPECT_TRUE(throws_error(
      [&] { F::scaled_dot_product_attention(q.to(kInt64), k.to(kInt64), v.to(kInt64)); },
      ErrorKind::DType, {op, "floating-point"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::scaled_dot_product_attention(q, k, v, {.attn_mask = ones({3, 5}, on(kInt64))});
      },
      ErrorKind::DType, {op, "attn_mask dtype", "int64"}));
  EXPECT_TRUE(throws_error([&] { F::scaled_dot_product_attention(q, k, v, {.dropout_p = 1.0}); },
                           ErrorKind::Value, {op, "dropout_p"}));
  EXPECT_TRUE(throws_error([&] { F::scaled_dot_product_attention(ones({4}, on()), k, v); },
                           ErrorKind::Shape, {op, "at least 2-D"}));
  if (!device().is_cpu()) {
    EXPECT_TRUE(throws_error([&] { F::scaled_dot_product_attention(q, k.cpu(), v); },
                             ErrorKind::Device, {op, "same device", ".to(device)"}));
  }
}

EMBER_INSTANTIATE_DEVICE_TESTS(AttentionTest);

}  // namespace
}  // namespace ember
