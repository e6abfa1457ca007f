// tests/test_einsum.cpp: einsum and repeat_interleave by hand -- what the PyTorch fixtures and
// the op table do not hold: error messages, integer dtypes, type promotion, spaces in the
// equation, a large contraction run as one bmm, and repeat_interleave's output_size.
#include <functional>
#include <set>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;

class EinsumTest : public testing::DeviceTest {};

// The names of the autograd nodes behind t, each node once.
std::multiset<std::string> graph_nodes(const Tensor& t) {
  std::multiset<std::string> names;
  std::set<const autograd::Node*> seen;
  std::function<void(const std::shared_ptr<autograd::Node>&)> walk =
      [&](const std::shared_ptr<autograd::Node>& n) {
        if (!n || !seen.insert(n.get()).second) return;
        names.insert(n->name());
        for (const autograd::Edge& e : n->next_edges()) walk(e.fn);
      };
  walk(t.grad_fn());
  return names;
}

TEST_P(EinsumTest, ErrorsNameTheEquationAndOperand) {
  Tensor a = ones({2, 3}, on()), b = ones({3, 4}, on()), c = ones({4, 2}, on());
  EXPECT_TRUE(throws_error([&] { einsum("ij,jk->ik", {a}); }, ErrorKind::Value,
                           {"[einsum]", "'ij,jk->ik'", "2 operand(s) but 1"}));
  EXPECT_TRUE(throws_error(
      [&] {
        einsum("ij->ij", {a, b});
      },
      ErrorKind::Value, {"[einsum]", "1 operand(s) but 2"}));
  EXPECT_TRUE(throws_error([&] { einsum("ij", {}); }, ErrorKind::Value, {"[einsum]", "'ij'"}));
  EXPECT_TRUE(throws_error(
      [&] {
        einsum("ij,jkl->ik", {a, b});
      },
      ErrorKind::Shape, {"[einsum]", "operand 1 has 2 dims", "'jkl'", "name 3"}));
  EXPECT_TRUE(throws_error([&] { einsum("...ijk", {a}); }, ErrorKind::Shape,
                           {"[einsum]", "operand 0", "at least 3"}));
  EXPECT_TRUE(throws_error(
      [&] {
        einsum("ij,jk->ik", {a, c});
      },
      ErrorKind::Shape, {"[einsum]", "subscript 'j'", "size 4 for operand 1", "size 3"}));
  EXPECT_TRUE(throws_error([&] { einsum("ii->i", {a}); }, ErrorKind::Shape,
                           {"[einsum]", "subscript 'i' is repeated for operand 0", "2 and 3"}));
  EXPECT_TRUE(throws_error(
      [&] {
        einsum("ij,j%->i", {a, b});
      },
      ErrorKind::Value, {"[einsum]", "invalid subscript '%' at index 4", "'ij,j%->i'"}));
  EXPECT_TRUE(throws_error([&] { einsum("i.j->i", {a}); }, ErrorKind::Value,
                           {"[einsum]", "'.' at index 1", "ellipsis"}));
  EXPECT_TRUE(throws_error([&] { einsum("...i...->i", {a}); }, ErrorKind::Value,
                           {"[einsum]", "more than one ellipsis"}));
  EXPECT_TRUE(throws_error([&] { einsum("ij->k", {a}); }, ErrorKind::Value,
                           {"[einsum]", "output subscript 'k'", "does not appear"}));
  EXPECT_TRUE(
      throws_error([&] { einsum("ij->ii", {a}); }, ErrorKind::Value,
                   {"[einsum]", "output subscript 'i' appears more than once", "'ij->ii'"}));
}

TEST_P(EinsumTest, IntegerOperandsContractExactly) {
  for (DType dtype : {kInt32, kInt64}) {
    Tensor a = (arange(12, on(kInt64)).view({3, 4}) - 5).to(dtype);
    Tensor b = (arange(20, on(kInt64)).view({4, 5}) * 3 - 17).to(dtype);
    Tensor out = einsum("ij,jk->ik", {a, b});
    EXPECT_EQ(out.dtype(), dtype);
    EXPECT_TRUE(tensor_equal(out, (a.unsqueeze(-1) * b.unsqueeze(0)).sum({1}).to(dtype)));
    EXPECT_TRUE(tensor_equal(einsum("ij,ij->i", {a, a}), (a * a).sum({1}).to(dtype)));
    // One operand's sums give int64, as PyTorch's.
    EXPECT_TRUE(tensor_equal(einsum("ij->", {a}), a.sum()));
    EXPECT_TRUE(tensor_equal(einsum("ij->j", {a}), a.sum({0})));
    EXPECT_TRUE(tensor_equal(einsum("ii->i", {a.narrow(1, 0, 3)}), diagonal(a.narrow(1, 0, 3))));
  }
}

TEST_P(EinsumTest, OperandsPromoteToOneDtype) {
  Tensor a = arange(4, on(kFloat32)) * 0.5, b = arange(4, on(kFloat64)) - 1.5;
  Tensor i = arange(4, on(kInt64));
  Tensor ab = einsum("i,i->", {a, b});
  EXPECT_EQ(ab.dtype(), kFloat64);
  EXPECT_TRUE(tensor_equal(ab, dot(a.to(kFloat64), b)));
  Tensor ai = einsum("i,j->ij", {i, a});
  EXPECT_EQ(ai.dtype(), kFloat32);
  EXPECT_TRUE(tensor_equal(ai, outer(i.to(kFloat32), a)));
}

TEST_P(EinsumTest, SpacesAreIgnored) {
  Tensor a = randn({2, 3}, on()), b = randn({3, 4}, on());
  EXPECT_TRUE(tensor_equal(einsum(" i j , j k -> i k ", {a, b}), einsum("ij,jk->ik", {a, b})));
  EXPECT_TRUE(tensor_equal(einsum("i j", {a}), a));
}

TEST_P(EinsumTest, LargeBatchedContractionIsOneBmm) {
  Tensor a = randn({4, 96, 64}, on()).requires_grad_(true);
  Tensor b = randn({4, 64, 80}, on()).requires_grad_(true);
  Tensor out = einsum("bij,bjk->bik", {a, b});
  EXPECT_TRUE(tensor_equal(out, bmm(a, b)));
  std::multiset<std::string> nodes = graph_nodes(out);
  EXPECT_EQ(nodes.count("BmmBackward0"), 1u);
  for (const char* product : {"MulBackward0", "SumBackward0", "SumBackward1"})
    EXPECT_EQ(nodes.count(product), 0u) << product;
  // The attention form: one bmm too, equal to matmul against the transposed keys.
  Tensor q = randn({2, 3, 40, 16}, on()), k = randn({2, 3, 50, 16}, on());
  Tensor scores = einsum("bhqd,bhkd->bhqk", {q, k});
  EXPECT_TRUE(tensor_close(scores, matmul(q, k.transpose(-1, -2)), 1e-5, 1e-5));
}

TEST_P(EinsumTest, RepeatInterleaveErrors) {
  Tensor x = arange(6, on(kFloat32)).view({2, 3});
  const TensorOptions i64 = on(kInt64);
  EXPECT_TRUE(throws_error([&] { repeat_interleave(x, -1); }, ErrorKind::Value,
                           {"[repeat_interleave]", "negative"}));
  EXPECT_TRUE(throws_error(
      [&] {
        repeat_interleave(x, tensor({1, -2, 1}, i64).to(kInt64), 1);
      },
      ErrorKind::Value, {"[repeat_interleave]", "negative"}));
  EXPECT_TRUE(throws_error(
      [&] {
        repeat_interleave(x, tensor({1, 2}, i64).to(kInt64), 1);
      },
      ErrorKind::Shape, {"[repeat_interleave]", "repeats.size(0) = 2", "input.size(1) = 3"}));
  EXPECT_TRUE(throws_error(
      [&] {
        repeat_interleave(x, tensor({1.0, 2.0}, on()), 0);
      },
      ErrorKind::DType, {"[repeat_interleave]", "int64"}));
  EXPECT_TRUE(throws_error(
      [&] {
        repeat_interleave(tensor({{1, 2}}, i64).to(kInt64));
      },
      ErrorKind::Shape, {"[repeat_interleave]", "1-D"}));
}

TEST_P(EinsumTest, RepeatInterleaveForms) {
  Tensor x = (arange(6, on(kInt64)).view({2, 3}) - 2).to(kInt32);
  Tensor counts = tensor({1, 0, 2}, on()).to(kInt64);
  Tensor by_counts = x.repeat_interleave(counts, 1);
  EXPECT_EQ(by_counts.dtype(), kInt32);
  EXPECT_TRUE(tensor_equal(by_counts, index_select(x, 1, tensor({0, 2, 2}, on()).to(kInt64))));
  // output_size (the sum of the counts) gives the same; int32 counts serve as int64 ones.
  EXPECT_TRUE(tensor_equal(x.repeat_interleave(counts, 1, 3), by_counts));
  EXPECT_TRUE(tensor_equal(x.repeat_interleave(counts.to(kInt32), 1), by_counts));
  EXPECT_TRUE(tensor_equal(repeat_interleave(x, 2, 0, 4), repeat_interleave(x, 2, 0)));
  EXPECT_TRUE(tensor_equal(repeat_interleave(counts), tensor({0, 2, 2}, on()).to(kInt64)));
  EXPECT_TRUE(tensor_equal(repeat_interleave(counts, std::optional<int64_t>(3)),
                           tensor({0, 2, 2}, on()).to(kInt64)));
  EXPECT_EQ(repeat_interleave(x, 0).numel(), 0);
  EXPECT_TRUE(tensor_equal(repeat_interleave(tensor(3.5, on()), 2), tensor({3.5, 3.5}, on())));
}

}  // namespace

EMBER_INSTANTIATE_DEVICE_TESTS(EinsumTest);

}  // namespace ember
