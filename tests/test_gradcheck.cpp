// tests/test_gradcheck.cpp: backward checked against central finite differences with
// autograd::gradcheck on float64 inputs on each device, for what the op table's gradcheck
// (test_op_table.cpp: every differentiable row on its samples) does not reach -- alpha and
// scalar operands, pow's other exponents and Scalar base, where and masked_fill forms, other
// broadcast shapes, reductions over several dims and with keepdim, prod with zeros, matmul on
// non-contiguous operands, views, joining and indexing ops, conversions, in-place ops and a small
// composite -- and gradcheck itself.
#include <functional>

#include "test_util.h"

namespace ember {
namespace {

using autograd::GradcheckOptions;
using indexing::Ellipsis;
using indexing::None;
using indexing::Slice;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

class GradcheckTest : public testing::DeviceTest {
 protected:
  // A float64 leaf requiring grad with the given values, on this test's device.
  Tensor leaf(const NestedValues& values) const {
    return tensor(values, {.dtype = kFloat64, .device = device(), .requires_grad = true});
  }
  // A float64 leaf of N(0, 1) values (drawn on the CPU from `seed`, so every device sees the same
  // numbers), requiring grad, on this test's device.
  Tensor randn_leaf(const Shape& shape, uint64_t seed = 1) const {
    Generator gen(seed);
    return randn(shape, {.dtype = kFloat64}, &gen).to(device()).requires_grad_();
  }
  // Like randn_leaf, uniform in [lo, hi).
  Tensor uniform_leaf(const Shape& shape, double lo, double hi, uint64_t seed = 1) const {
    Generator gen(seed);
    Tensor t = rand(shape, {.dtype = kFloat64}, &gen) * (hi - lo) + lo;
    return t.to(device()).requires_grad_();
  }
  // An int64 index tensor on this test's device.
  Tensor index(const NestedValues& values) const {
    return tensor(values, {.dtype = kInt64, .device = device()});
  }
  Tensor mask(const NestedValues& values) const {
    return tensor(values, {.dtype = kBool, .device = device()});
  }

  // gradcheck's verdict as an assertion (its error message on a mismatch); also checks that f's
  // output is on this test's device.
  ::testing::AssertionResult grad_ok(const Fn& f, const std::vector<Tensor>& inputs,
                                     const GradcheckOptions& options = {}) const {
    try {
      Tensor out = f(inputs);
      if (out.device() != inputs[0].device())
        return ::testing::AssertionFailure()
               << "output on " << out.device() << ", inputs on " << inputs[0].device();
      if (!autograd::gradcheck(f, inputs, options))
        return ::testing::AssertionFailure() << "gradcheck returned false";
    } catch (const std::exception& e) {
      return ::testing::AssertionFailure() << e.what();
    }
    return ::testing::AssertionSuccess();
  }
};

// --- gradcheck itself

TEST_P(GradcheckTest, CatchesAWrongGradientAndBadInputs) {
  Tensor x = randn_leaf({3}, 200);
  // x.detach() * x has derivative 2x, but backward sees only the live factor: x.
  try {
    autograd::gradcheck([](auto& t) { return t[0].detach() * t[0]; }, {x});
    ADD_FAILURE() << "gradcheck passed a wrong gradient";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Jacobian mismatch for input 0"), std::string::npos)
        << e.what();
  }
  Tensor f32 = randn_leaf({3}, 201).detach().to(kFloat32).requires_grad_();
  EXPECT_TRUE(
      testing::throws_error([&] { autograd::gradcheck([](auto& t) { return t[0] * 2; }, {f32}); },
                            ErrorKind::DType, {"float64"}));
  EXPECT_TRUE(testing::throws_error(
      [&] { autograd::gradcheck([](auto& t) { return t[0].detach(); }, {x}); }, ErrorKind::Value,
      {"does not require grad"}));
}

// --- element-wise, binary

TEST_P(GradcheckTest, AddAndSubWithAlpha) {
  Tensor a = randn_leaf({2, 3}, 1), b = randn_leaf({2, 3}, 2);
  EXPECT_TRUE(grad_ok([](auto& x) { return add(x[0], x[1]); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return add(x[0], x[1], 2.5); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return sub(x[0], x[1]); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return sub(x[0], x[1], -0.5); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0].add(x[1], 3); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0] + 3.0; }, {a}));
  EXPECT_TRUE(grad_ok([](auto& x) { return 2.0 - x[0]; }, {a}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0] - 1.5; }, {a}));
  // With broadcasting: a column against a row.
  Tensor col = randn_leaf({3, 1}, 20), row = randn_leaf({1, 4}, 21);
  EXPECT_TRUE(grad_ok([](auto& x) { return sub(x[0], x[1], 2); }, {col, row}));
}

TEST_P(GradcheckTest, MulAndDiv) {
  Tensor a = randn_leaf({2, 3}, 3), b = uniform_leaf({2, 3}, 0.5, 2.0, 4);
  EXPECT_TRUE(grad_ok([](auto& x) { return mul(x[0], x[1]); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0] * x[0]; }, {a}));  // the same input twice
  EXPECT_TRUE(grad_ok([](auto& x) { return div(x[0], x[1]); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0] * 2.5; }, {a}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0] / 4.0; }, {a}));
  EXPECT_TRUE(grad_ok([](auto& x) { return 3.0 / x[0]; }, {b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return -2.0 * x[0]; }, {a}));
}

TEST_P(GradcheckTest, PowTensorScalar) {
  Tensor x = uniform_leaf({2, 3}, 0.5, 2.0, 7), signed_x = randn_leaf({5}, 8);
  EXPECT_TRUE(grad_ok([](auto& t) { return pow(t[0], 2.5); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return pow(t[0], -1.5); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].pow(0.5); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return pow(t[0], 3); }, {signed_x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return pow(t[0], 2); }, {signed_x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return pow(t[0], 1); }, {signed_x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return pow(t[0], 0) + t[0]; }, {signed_x}));
}

TEST_P(GradcheckTest, PowScalarTensor) {
  Tensor e = randn_leaf({2, 3}, 9);
  EXPECT_TRUE(grad_ok([](auto& t) { return pow(2.0, t[0]); }, {e}));
  EXPECT_TRUE(grad_ok([](auto& t) { return pow(0.5, t[0]); }, {e}));
}

// --- where and masked_fill

TEST_P(GradcheckTest, Where) {
  Tensor a = randn_leaf({2, 3}, 14), b = randn_leaf({2, 3}, 15);
  Tensor cond = mask({{true, false, true}, {false, false, true}});
  EXPECT_TRUE(grad_ok([&](auto& x) { return where(cond, x[0], x[1]); }, {a, b}));
  EXPECT_TRUE(grad_ok([&](auto& x) { return where(cond, x[0], 2.0); }, {a}));
  EXPECT_TRUE(grad_ok([&](auto& x) { return where(cond, -1.0, x[0]); }, {b}));
  // Broadcast: a row, a column and the condition each expanded to (2, 3).
  Tensor row = randn_leaf({3}, 16), col = randn_leaf({2, 1}, 17);
  EXPECT_TRUE(grad_ok([&](auto& x) { return where(cond, x[0], x[1]); }, {row, col}));
  Tensor cond_row = mask({true, false, true});
  EXPECT_TRUE(grad_ok([&](auto& x) { return where(cond_row, x[0], x[1]); }, {a, col}));
}

TEST_P(GradcheckTest, MaskedFill) {
  Tensor x = randn_leaf({2, 3}, 18);
  Tensor m = mask({{true, false, false}, {false, true, true}});
  EXPECT_TRUE(grad_ok([&](auto& t) { return masked_fill(t[0], m, 0.5); }, {x}));
  EXPECT_TRUE(grad_ok([&](auto& t) { return t[0].masked_fill(m, -3.0) * t[0]; }, {x}));
  // The mask broadcast over x, and x broadcast to the mask.
  Tensor row_mask = mask({false, true, false});
  EXPECT_TRUE(grad_ok([&](auto& t) { return masked_fill(t[0], row_mask, 1.0); }, {x}));
  Tensor row = randn_leaf({3}, 19);
  EXPECT_TRUE(grad_ok([&](auto& t) { return masked_fill(t[0], m, 1.0); }, {row}));
}

TEST_P(GradcheckTest, BroadcastingOtherShapes) {
  Tensor m = randn_leaf({2, 3, 4}, 24), v = randn_leaf({4}, 25), s = randn_leaf({}, 26);
  Tensor mid = randn_leaf({3, 1}, 27);
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0] * x[1]; }, {m, v}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0] + x[1]; }, {m, s}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0] * x[1] - x[0]; }, {v, s}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0] * x[1]; }, {m, mid}));
}

// --- reductions

TEST_P(GradcheckTest, SumAndMean) {
  Tensor x = randn_leaf({2, 3, 4}, 30);
  EXPECT_TRUE(grad_ok([](auto& t) { return sum(t[0]); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].sum({1}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].sum({0, 2}, true); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].sum({-1}, false); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return mean(t[0]); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].mean({1}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].mean({0, 2}, true); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].mean({-2, -1}); }, {x}));
}

TEST_P(GradcheckTest, Prod) {
  Tensor x = uniform_leaf({2, 3}, 0.5, 1.5, 31);
  EXPECT_TRUE(grad_ok([](auto& t) { return prod(t[0]); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].prod(1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].prod(0, true); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].prod(-1, true); }, {x}));
}

TEST_P(GradcheckTest, ProdWithZeros) {
  Tensor one_zero = leaf({{1.5, 0.0, -2.0}, {0.5, 3.0, 1.25}});
  Tensor two_zeros = leaf({{1.5, 0.0, -2.0}, {0.0, 3.0, 1.25}});
  Tensor two_in_a_row = leaf({{0.0, 2.0, 0.0}, {0.5, 0.0, 1.25}});
  EXPECT_TRUE(grad_ok([](auto& t) { return prod(t[0]); }, {one_zero}));
  EXPECT_TRUE(grad_ok([](auto& t) { return prod(t[0]); }, {two_zeros}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].prod(1); }, {one_zero}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].prod(0); }, {two_zeros}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].prod(1, true); }, {two_in_a_row}));
}

TEST_P(GradcheckTest, MaxAndMin) {
  Tensor x = leaf({{1.0, -2.0, 3.5, 0.25}, {4.0, -1.0, 2.5, -3.0}, {0.5, 1.5, -0.5, 2.0}});
  EXPECT_TRUE(grad_ok([](auto& t) { return max(t[0]); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return min(t[0]); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return std::get<0>(max(t[0], 1)); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return std::get<0>(t[0].max(0, true)); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return std::get<0>(min(t[0], 0)); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return std::get<0>(t[0].min(-1, true)); }, {x}));
}

TEST_P(GradcheckTest, AmaxAndAmin) {
  Tensor x = randn_leaf({2, 3, 4}, 32);
  EXPECT_TRUE(grad_ok([](auto& t) { return amax(t[0], {}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return amax(t[0], {1}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].amax({0, 2}, true); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return amin(t[0], {-1}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].amin({0, 1}, true); }, {x}));
}

TEST_P(GradcheckTest, VarAndStd) {
  Tensor x = randn_leaf({3, 4}, 33);
  EXPECT_TRUE(grad_ok([](auto& t) { return var(t[0]); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].var({}, false); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].var({1}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].var({0}, false, true); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return std(t[0]); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].std({1}, true, true); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].std({0}, false); }, {x}));
}

TEST_P(GradcheckTest, SoftmaxAndLogSoftmax) {
  Tensor x = randn_leaf({3, 4}, 34);
  EXPECT_TRUE(grad_ok([](auto& t) { return softmax(t[0], 1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return softmax(t[0], 0); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].softmax(-1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return log_softmax(t[0], 1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].log_softmax(0); }, {x}));
  Tensor x3 = randn_leaf({2, 3, 2}, 35);
  EXPECT_TRUE(grad_ok([](auto& t) { return softmax(t[0], 1); }, {x3}));
  EXPECT_TRUE(grad_ok([](auto& t) { return log_softmax(t[0], 1); }, {x3}));
}

TEST_P(GradcheckTest, Logsumexp) {
  Tensor x = randn_leaf({2, 3, 4}, 36);
  EXPECT_TRUE(grad_ok([](auto& t) { return logsumexp(t[0], {1}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].logsumexp({0, 2}, true); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return logsumexp(t[0], {}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].logsumexp({-1}); }, {x}));
}

// --- linear algebra

TEST_P(GradcheckTest, MatmulVectorAndMatrixForms) {
  Tensor v3 = randn_leaf({3}, 40), w3 = randn_leaf({3}, 41), v4 = randn_leaf({4}, 42);
  Tensor m34 = randn_leaf({3, 4}, 43), m45 = randn_leaf({4, 5}, 44);
  auto mat = [](auto& x) { return matmul(x[0], x[1]); };
  EXPECT_TRUE(grad_ok(mat, {v3, w3}));    // 1-D @ 1-D: dot product
  EXPECT_TRUE(grad_ok(mat, {m34, v4}));   // 2-D @ 1-D
  EXPECT_TRUE(grad_ok(mat, {v3, m34}));   // 1-D @ 2-D
  EXPECT_TRUE(grad_ok(mat, {m34, m45}));  // 2-D @ 2-D
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0].matmul(x[1]); }, {m34, m45}));
  // Non-contiguous operands.
  Tensor m43 = randn_leaf({4, 3}, 45);
  EXPECT_TRUE(grad_ok([](auto& x) { return matmul(x[0].t(), x[1].t()); }, {m43, m34}));
}

TEST_P(GradcheckTest, MatmulBatchedAndBroadcast) {
  auto mat = [](auto& x) { return matmul(x[0], x[1]); };
  Tensor a = randn_leaf({2, 3, 4}, 46), b = randn_leaf({2, 4, 2}, 47);
  Tensor m42 = randn_leaf({4, 2}, 48), m53 = randn_leaf({5, 3}, 49);
  Tensor v4 = randn_leaf({4}, 50), v3 = randn_leaf({3}, 51);
  EXPECT_TRUE(grad_ok(mat, {a, b}));    // (2,3,4) @ (2,4,2)
  EXPECT_TRUE(grad_ok(mat, {a, m42}));  // (2,3,4) @ (4,2): batch folded into rows
  EXPECT_TRUE(grad_ok(mat, {m53, a}));  // (5,3) @ (2,3,4): broadcast batch
  EXPECT_TRUE(grad_ok(mat, {a, v4}));   // (2,3,4) @ (4)
  EXPECT_TRUE(grad_ok(mat, {v3, a}));   // (3) @ (2,3,4)
  Tensor c = randn_leaf({2, 1, 3, 4}, 52), d = randn_leaf({3, 4, 2}, 53);
  EXPECT_TRUE(grad_ok(mat, {c, d}));  // (2,1,3,4) @ (3,4,2) -> (2,3,3,2)
  // A non-contiguous batched left operand takes the general path.
  Tensor e = randn_leaf({2, 4, 3}, 54);
  EXPECT_TRUE(grad_ok([](auto& x) { return matmul(x[0].transpose(1, 2), x[1]); }, {e, m42}));
}

TEST_P(GradcheckTest, MmAndBmm) {
  Tensor a = randn_leaf({3, 4}, 55), b = randn_leaf({4, 2}, 56);
  EXPECT_TRUE(grad_ok([](auto& x) { return mm(x[0], x[1]); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0].mm(x[1]); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return mm(x[0], x[0].t()); }, {a}));
  Tensor p = randn_leaf({2, 3, 4}, 57), q = randn_leaf({2, 4, 5}, 58);
  EXPECT_TRUE(grad_ok([](auto& x) { return bmm(x[0], x[1]); }, {p, q}));
  EXPECT_TRUE(grad_ok([](auto& x) { return x[0].bmm(x[1]); }, {p, q}));
}

// --- views

TEST_P(GradcheckTest, ReshapingViews) {
  Tensor x = randn_leaf({2, 3, 4}, 60);
  // Each result is multiplied by fixed weights so a wrong element order would show.
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].view({6, 4}); }, {x}));
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        return t[0].view({-1}) * arange(24, {.dtype = kFloat64, .device = t[0].device()});
      },
      {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].reshape({4, 6}); }, {x}));
  // Not viewable: reshape copies.
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].transpose(0, 2).reshape({-1}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].flatten(); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].flatten(1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].flatten(0, 1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].view_as(t[0].t()); }, {randn_leaf({3, 2}, 61)}));
}

TEST_P(GradcheckTest, SqueezeAndUnsqueeze) {
  Tensor x = randn_leaf({2, 1, 3, 1}, 62);
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].squeeze(); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].squeeze(1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].squeeze(-1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].squeeze(0); }, {x}));  // size 2: unchanged
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].unsqueeze(0); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].unsqueeze(-1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].squeeze().unsqueeze(1); }, {x}));
}

TEST_P(GradcheckTest, PermuteTransposeT) {
  Tensor x = randn_leaf({2, 3, 4}, 63), m = randn_leaf({3, 5}, 64), v = randn_leaf({3}, 65);
  Tensor w = randn_leaf({4, 3, 2}, 66).detach();  // fixed weights of the permuted shape
  EXPECT_TRUE(grad_ok([&](auto& t) { return t[0].permute({2, 1, 0}) * w; }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].permute({1, -1, 0}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].transpose(0, 2); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].transpose(-1, 1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].t(); }, {m}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].t() * 2.0; }, {v}));  // 1-D: unchanged
}

TEST_P(GradcheckTest, NarrowSliceSelect) {
  Tensor x = randn_leaf({4, 5}, 67);
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].narrow(0, 1, 2); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].narrow(1, -3, 3); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].slice(1, 0, std::nullopt, 2); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].slice(0, 1, 4, 2); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].slice(1, -4, -1, 3); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].select(0, 2); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].select(1, -1); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0][3]; }, {x}));
  // Overlapping picks of the same input add up.
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].narrow(0, 0, 3) * t[0].narrow(0, 1, 3); }, {x}));
}

TEST_P(GradcheckTest, Expand) {
  Tensor col = randn_leaf({3, 1}, 68), v = randn_leaf({4}, 69), s = randn_leaf({}, 70);
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].expand({3, 4}); }, {col}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].expand({2, 3, -1}); }, {col}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].expand({2, 4}); }, {v}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].expand({2, 3}); }, {s}));
  EXPECT_TRUE(grad_ok(
      [&](auto& t) {
        return t[0].expand_as(ones({5, 4}, {.device = device()}));
      },
      {v}));
}

TEST_P(GradcheckTest, IndexWithSliceNoneEllipsis) {
  Tensor x = randn_leaf({3, 4, 5}, 71);
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].index({1}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].index({Slice(1, None), 2}); }, {x}));
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        return t[0].index({Slice(None, None, 2), None, Slice(1, 4)});
      },
      {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].index({Ellipsis, -1}); }, {x}));
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        return t[0].index({0, Ellipsis, Slice(None, None, 3)});
      },
      {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].index({None, Ellipsis, None}); }, {x}));
}

TEST_P(GradcheckTest, Contiguous) {
  Tensor x = randn_leaf({3, 4}, 72);
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].contiguous(); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].t().contiguous(); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].slice(1, 0, std::nullopt, 2).contiguous(); }, {x}));
}

// --- joining and indexing

TEST_P(GradcheckTest, Cat) {
  Tensor a = randn_leaf({2, 3}, 80), b = randn_leaf({1, 3}, 81), c = randn_leaf({2, 2}, 82);
  EXPECT_TRUE(grad_ok([](auto& x) { return cat({x[0], x[1]}); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return cat({x[0], x[1], x[0]}, 0); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return cat({x[0], x[1]}, -1); }, {a, c}));
  // Only some inputs require grad.
  Tensor fixed = randn_leaf({2, 3}, 83).detach();
  EXPECT_TRUE(grad_ok([&](auto& x) { return cat({fixed, x[0]}, 1); }, {a}));
}

TEST_P(GradcheckTest, Stack) {
  Tensor a = randn_leaf({2, 3}, 84), b = randn_leaf({2, 3}, 85);
  EXPECT_TRUE(grad_ok([](auto& x) { return stack({x[0], x[1]}); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return stack({x[0], x[1], x[0]}, 1); }, {a, b}));
  EXPECT_TRUE(grad_ok([](auto& x) { return stack({x[0], x[1]}, -1); }, {a, b}));
}

TEST_P(GradcheckTest, IndexSelect) {
  Tensor x = randn_leaf({4, 3}, 86);
  Tensor idx = index({2, 0, 2, 3});  // a repeated index accumulates
  EXPECT_TRUE(grad_ok([&](auto& t) { return index_select(t[0], 0, idx); }, {x}));
  EXPECT_TRUE(grad_ok([&](auto& t) { return t[0].index_select(1, index({1, 1, 0})); }, {x}));
  EXPECT_TRUE(grad_ok([&](auto& t) { return index_select(t[0], -1, index({2})); }, {x}));
}

TEST_P(GradcheckTest, Gather) {
  Tensor x = randn_leaf({3, 4}, 87);
  Tensor idx1 = index({{0, 0, 3}, {1, 2, 1}, {3, 3, 3}});
  EXPECT_TRUE(grad_ok([&](auto& t) { return gather(t[0], 1, idx1); }, {x}));
  Tensor idx0 = index({{2, 0, 1, 2}, {2, 2, 0, 1}});
  EXPECT_TRUE(grad_ok([&](auto& t) { return t[0].gather(0, idx0); }, {x}));
}

TEST_P(GradcheckTest, ScatterAddSelfAndSrc) {
  Tensor self = randn_leaf({3, 4}, 88), src = randn_leaf({2, 4}, 89);
  Tensor idx = index({{0, 1, 2, 0}, {2, 1, 0, 0}});  // repeated targets
  EXPECT_TRUE(grad_ok([&](auto& t) { return scatter_add(t[0], 0, idx, t[1]); }, {self, src}));
  EXPECT_TRUE(grad_ok([&](auto& t) { return t[0].scatter_add(0, idx, t[1]); }, {self, src}));
  // With respect to one of them only.
  Tensor fixed_src = src.detach(), fixed_self = self.detach();
  EXPECT_TRUE(grad_ok([&](auto& t) { return scatter_add(t[0], 0, idx, fixed_src); }, {self}));
  EXPECT_TRUE(grad_ok([&](auto& t) { return scatter_add(fixed_self, 0, idx, t[0]); }, {src}));
  // src larger than the index: only its leading corner is used.
  Tensor big_src = randn_leaf({3, 5}, 90);
  Tensor idx1 = index({{3, 0}, {1, 1}});
  EXPECT_TRUE(grad_ok([&](auto& t) { return scatter_add(t[0], 1, idx1, t[1]); }, {self, big_src}));
}

// --- conversions and copies

TEST_P(GradcheckTest, ToSameDtypeAndClone) {
  Tensor x = randn_leaf({2, 3}, 91);
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].to(kFloat64); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].to(kFloat64) * t[0]; }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].to(kFloat64, false, /*copy=*/true); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].clone(); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].t().clone() * 3.0; }, {x}));
  EXPECT_TRUE(grad_ok([&](auto& t) { return t[0].to(device()) + t[0].cpu().to(device()); }, {x}));
}

// --- in-place ops on tensors computed from the inputs (never on the leaves themselves)

TEST_P(GradcheckTest, InPlaceArithmeticOnNonLeaf) {
  Tensor x = randn_leaf({2, 3}, 92), w = uniform_leaf({2, 3}, 0.5, 2.0, 93);
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        Tensor y = t[0] * 1.0;
        y.add_(t[1], 2.0);
        y.mul_(t[1]);
        y.sub_(t[0]);
        y.div_(t[1]);
        return y;
      },
      {x, w}));
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        Tensor y = t[0].clone();
        y += 1.0;
        y *= 3.0;
        y -= t[0];
        y /= 2.0;
        return y * y;
      },
      {x}));
}

TEST_P(GradcheckTest, InPlaceClampFillMaskedFillCopy) {
  Tensor x = leaf({{-2.0, -0.7, -0.2}, {0.1, 0.6, 1.7}});
  Tensor src = randn_leaf({3}, 94);
  Tensor m = mask({{true, false, false}, {false, true, false}});
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].clone().clamp_(-0.5, 0.5); }, {x}));
  EXPECT_TRUE(grad_ok([&](auto& t) { return t[0].clone().masked_fill_(m, 2.0) * t[0]; }, {x}));
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        Tensor y = t[0] * 2.0;
        y.select(0, 1).fill_(0.5);
        return y;
      },
      {x}));
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        Tensor y = t[0] * 2.0;
        y.copy_(t[1]);  // broadcast: row copied into both rows
        return y;
      },
      {x, src}));
}

TEST_P(GradcheckTest, InPlaceOnViewsOfNonLeaf) {
  Tensor x = randn_leaf({4, 3}, 95), w = randn_leaf({3}, 96);
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        Tensor y = t[0].clone();
        y.narrow(0, 0, 2).mul_(2.0);
        return y;
      },
      {x}));
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        Tensor y = t[0] * 3.0;  // mul by a number saves nothing of y
        y.select(0, 2).add_(t[1]);
        y.slice(1, 0, std::nullopt, 2).mul_(t[0].slice(1, 0, std::nullopt, 2));
        return y * 2.0;
      },
      {x, w}));
  // The view's own value after the change, and a view of a view. (v.mul_(v) would change the
  // operand mul saved, an error as in PyTorch; v * 1.0 is a copy.)
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        Tensor y = t[0] + 0.0;
        Tensor v = y.t().narrow(0, 1, 2);
        v.mul_(v * 1.0);
        return v.sum() * y;
      },
      {x}));
}

TEST_P(GradcheckTest, InPlaceScatterAdd) {
  Tensor x = randn_leaf({3, 4}, 97), src = randn_leaf({2, 4}, 98);
  Tensor idx = index({{0, 1, 2, 0}, {2, 1, 0, 0}});
  EXPECT_TRUE(grad_ok([&](auto& t) { return (t[0] * 1.0).scatter_add_(0, idx, t[1]); }, {x, src}));
}

// --- in-place on results that are internally views (reductions with keepdim=false)

TEST_P(GradcheckTest, InPlaceOnReductionResults) {
  Tensor x = randn_leaf({3, 4}, 99);
  Tensor m = mask({true, false, false});
  EXPECT_TRUE(grad_ok([](auto& t) { return t[0].sum({1}).mul_(2.0); }, {x}));
  EXPECT_TRUE(grad_ok([&](auto& t) { return t[0].sum({1}).masked_fill_(m, 0.0); }, {x}));
  EXPECT_TRUE(grad_ok(
      [&](auto& t) {
        Tensor y = t[0].mean({0});
        y.narrow(0, 0, 2).fill_(1.0);
        return y;
      },
      {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return matmul(t[0], t[0].t()).clamp_(-1.0, 1.0); }, {x}));
}

// --- a small composite

TEST_P(GradcheckTest, TwoLayerNetwork) {
  Tensor input = randn_leaf({4, 3}, 100), w1 = randn_leaf({3, 5}, 101), b1 = randn_leaf({5}, 102);
  Tensor w2 = randn_leaf({5, 2}, 103);
  EXPECT_TRUE(
      grad_ok([](auto& x) { return log_softmax(matmul(tanh(matmul(x[0], x[1]) + x[2]), x[3]), 1); },
              {input, w1, b1, w2}));
  EXPECT_TRUE(
      grad_ok([](auto& x) { return (sigmoid(matmul(x[0], x[1]) + x[2]) - 0.5).pow(2).mean(); },
              {input, w1, b1}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(GradcheckTest);

}  // namespace
}  // namespace ember
