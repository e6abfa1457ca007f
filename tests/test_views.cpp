// tests/test_views.cpp: ops that return views of the same storage -- view, reshape, flatten,
// squeeze/unsqueeze, permute/transpose/t, narrow/slice/select, expand, basic indexing with
// index({...}) and operator[] -- their sizes, strides and offsets, writes through views, and
// PyTorch's "Dimension out of range" messages.
#include "test_util.h"

namespace ember {
namespace {

using indexing::Ellipsis;
using indexing::None;
using indexing::Slice;
using testing::tensor_equal;
using testing::throws_error;
using testing::values_of;

class ViewsTest : public testing::DeviceTest {
 protected:
  // 0, 1, 2, ... as int64, laid out contiguously in `shape`.
  Tensor iota(const Shape& shape) const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return arange(n, on()).view(shape);
  }
};

TEST_P(ViewsTest, ViewInfersMinusOneAndSharesStorage) {
  Tensor base = iota({24});
  Tensor v = base.view({2, -1, 4});
  EXPECT_EQ(v.sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(v.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(v.storage(), base.storage());
  EXPECT_EQ(v.storage_offset(), 0);
  EXPECT_EQ(base.view({-1, 6}).sizes(), (Shape{4, 6}));
  EXPECT_EQ(base.view({24, 1, -1}).sizes(), (Shape{24, 1, 1}));
  EXPECT_TRUE(tensor_equal(v.view({-1}), base));
  EXPECT_EQ(v.index({1, 2, 3}).item<int64_t>(), 23);
  // A 0-dim tensor views as any shape of one element, and back.
  Tensor s = scalar_tensor(5, on(kInt64));
  EXPECT_EQ(s.view({1, 1}).sizes(), (Shape{1, 1}));
  EXPECT_EQ(s.view({1, 1}).view({}).dim(), 0);
  EXPECT_EQ(base.view_as(zeros({3, 8})).sizes(), (Shape{3, 8}));
}

TEST_P(ViewsTest, ViewRejectsImpossibleShapes) {
  Tensor x = iota({24});
  EXPECT_TRUE(throws_error(
      [&] {
        x.view({5, -1});
      },
      ErrorKind::Shape, {"[view]", "[5, -1]", "invalid for input of size 24"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.view({5, 5});
      },
      ErrorKind::Shape, {"[5, 5]", "invalid for input of size 24"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.view({-1, -1});
      },
      ErrorKind::Shape, {"only one dimension can be inferred"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.view({-2, -12});
      },
      ErrorKind::Shape, {"invalid shape dimension"}));
}

TEST_P(ViewsTest, ViewOfIncompatibleStridesSuggestsReshape) {
  Tensor t = iota({2, 3}).t();  // (3, 2) with strides (1, 3)
  EXPECT_TRUE(throws_error([&] { t.view({6}); }, ErrorKind::Shape,
                           {"view size [6]", "not compatible with input tensor's size [3, 2]",
                            "stride [1, 3]", ".reshape(...)"}));
  // Shapes that only add or drop size-1 dims, or split within one contiguous run, are fine.
  EXPECT_EQ(t.view({3, 1, 2}).strides(), (Shape{1, 6, 3}));
  Tensor rows = iota({2, 12}).slice(1, 0, 6);  // (2, 6), strides (12, 1)
  Tensor v = rows.view({2, 2, 3});
  EXPECT_EQ(v.strides(), (Shape{12, 3, 1}));
  EXPECT_EQ(v.index({1, 1, 2}).item<int64_t>(), 17);  // rows[1][5] = 12 + 5
  EXPECT_TRUE(throws_error([&] { rows.view({12}); }, ErrorKind::Shape, {".reshape(...)"}));
}

TEST_P(ViewsTest, ReshapeIsAViewWhenPossible) {
  Tensor base = iota({2, 3, 4});
  Tensor r = base.reshape({6, -1});
  EXPECT_EQ(r.sizes(), (Shape{6, 4}));
  EXPECT_EQ(r.storage(), base.storage());
  r.select(0, 0).fill_(-1);  // writes through to base
  EXPECT_TRUE(tensor_equal(base.index({0, 0}), tensor({-1, -1, -1, -1}, on())));
}

TEST_P(ViewsTest, ReshapeCopiesWhenAViewIsImpossible) {
  Tensor base = iota({2, 3});
  Tensor r = base.t().reshape({6});
  EXPECT_NE(r.storage(), base.storage());
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_TRUE(tensor_equal(r, tensor({0, 3, 1, 4, 2, 5}, on())));
  base.fill_(9);  // the copy is independent
  EXPECT_TRUE(tensor_equal(r, tensor({0, 3, 1, 4, 2, 5}, on())));
  EXPECT_TRUE(throws_error(
      [&] {
        base.reshape({4, -1});
      },
      ErrorKind::Shape, {"[reshape]", "invalid for input of size 6"}));
}

TEST_P(ViewsTest, FlattenStartAndEndDims) {
  Tensor x = iota({2, 3, 4});
  EXPECT_EQ(x.flatten().sizes(), (Shape{24}));
  EXPECT_EQ(x.flatten(1).sizes(), (Shape{2, 12}));
  EXPECT_EQ(x.flatten(0, 1).sizes(), (Shape{6, 4}));
  EXPECT_EQ(x.flatten(-2, -1).sizes(), (Shape{2, 12}));
  EXPECT_EQ(x.flatten(1, 1).sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(x.flatten().storage(), x.storage());
  EXPECT_TRUE(tensor_equal(x.flatten(), arange(24, on())));
  EXPECT_EQ(scalar_tensor(3, on()).flatten().sizes(), (Shape{1}));  // as torch.flatten of 0-dim
  // Non-contiguous input: flattened in logical (row-major) order.
  EXPECT_TRUE(tensor_equal(iota({2, 3}).t().flatten(), tensor({0, 3, 1, 4, 2, 5}, on())));
  EXPECT_TRUE(throws_error([&] { x.flatten(2, 1); }, ErrorKind::Index, {"cannot come after"}));
  EXPECT_TRUE(
      throws_error([&] { x.flatten(0, 3); }, ErrorKind::Index,
                   {"Dimension out of range (expected to be in range of [-3, 2], but got 3)"}));
}

TEST_P(ViewsTest, SqueezeAllOneDimOrNothing) {
  Tensor x = zeros({1, 3, 1, 2}, on());
  Tensor all = x.squeeze();
  EXPECT_EQ(all.sizes(), (Shape{3, 2}));
  EXPECT_EQ(all.strides(), (Shape{2, 1}));
  EXPECT_EQ(all.storage(), x.storage());
  EXPECT_EQ(x.squeeze(0).sizes(), (Shape{3, 1, 2}));
  EXPECT_EQ(x.squeeze(-2).sizes(), (Shape{1, 3, 2}));
  EXPECT_EQ(x.squeeze(1).sizes(), (Shape{1, 3, 1, 2}));  // size 3: no-op
  EXPECT_EQ(zeros({2, 3}, on()).squeeze().sizes(), (Shape{2, 3}));
  EXPECT_EQ(zeros({1, 1}, on()).squeeze().dim(), 0);
  Tensor s = scalar_tensor(1.5, on());
  EXPECT_EQ(s.squeeze().dim(), 0);
  EXPECT_EQ(s.squeeze(0).dim(), 0);
  EXPECT_EQ(s.squeeze(-1).dim(), 0);
  EXPECT_TRUE(
      throws_error([&] { x.squeeze(4); }, ErrorKind::Index,
                   {"Dimension out of range (expected to be in range of [-4, 3], but got 4)"}));
  EXPECT_TRUE(
      throws_error([&] { s.squeeze(1); }, ErrorKind::Index,
                   {"Dimension out of range (expected to be in range of [-1, 0], but got 1)"}));
}

TEST_P(ViewsTest, UnsqueezeWithNegativeDims) {
  Tensor x = iota({2, 3});
  // PyTorch's stride for the new dim: sizes[d] * strides[d], or 1 at the end.
  EXPECT_EQ(x.unsqueeze(0).sizes(), (Shape{1, 2, 3}));
  EXPECT_EQ(x.unsqueeze(0).strides(), (Shape{6, 3, 1}));
  EXPECT_EQ(x.unsqueeze(1).sizes(), (Shape{2, 1, 3}));
  EXPECT_EQ(x.unsqueeze(1).strides(), (Shape{3, 3, 1}));
  EXPECT_EQ(x.unsqueeze(2).sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(-1).sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(-1).strides(), (Shape{3, 1, 1}));
  EXPECT_EQ(x.unsqueeze(-2).sizes(), (Shape{2, 1, 3}));
  EXPECT_EQ(x.unsqueeze(-3).sizes(), (Shape{1, 2, 3}));
  EXPECT_TRUE(x.unsqueeze(1).is_contiguous());
  EXPECT_EQ(x.unsqueeze(1).storage(), x.storage());
  EXPECT_TRUE(tensor_equal(x.unsqueeze(1).squeeze(1), x));
  EXPECT_EQ(scalar_tensor(2, on()).unsqueeze(0).sizes(), (Shape{1}));
  EXPECT_EQ(scalar_tensor(2, on()).unsqueeze(-1).sizes(), (Shape{1}));
  EXPECT_TRUE(
      throws_error([&] { x.unsqueeze(3); }, ErrorKind::Index,
                   {"Dimension out of range (expected to be in range of [-3, 2], but got 3)"}));
  EXPECT_TRUE(throws_error([&] { x.unsqueeze(-4); }, ErrorKind::Index, {"but got -4"}));
}

TEST_P(ViewsTest, PermuteReordersDims) {
  Tensor x = iota({2, 3, 4});
  Tensor p = x.permute({2, 0, 1});
  EXPECT_EQ(p.sizes(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Shape{1, 12, 4}));
  EXPECT_FALSE(p.is_contiguous());
  EXPECT_EQ(p.storage(), x.storage());
  // p[i][j][k] = x[j][k][i] = 12 j + 4 k + i.
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back(12 * j + 4 * k + i);
  EXPECT_EQ(values_of(p), expected);
  EXPECT_EQ(x.permute({-1, 0, 1}).strides(), (Shape{1, 12, 4}));
  EXPECT_TRUE(tensor_equal(x.permute({0, 1, 2}), x));
  EXPECT_TRUE(throws_error([&] { x.permute({0, 0, 1}); }, ErrorKind::Index, {"repeated dim 0"}));
  EXPECT_TRUE(throws_error([&] { x.permute({0, 2, -1}); }, ErrorKind::Index, {"repeated dim 2"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.permute({0, 1});
      },
      ErrorKind::Shape, {"number of dims don't match"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.permute({0, 1, 3});
      },
      ErrorKind::Index, {"Dimension out of range"}));
}

TEST_P(ViewsTest, TransposeSwapsTwoDims) {
  Tensor x = iota({2, 3, 4});
  Tensor y = x.transpose(0, 2);
  EXPECT_EQ(y.sizes(), (Shape{4, 3, 2}));
  EXPECT_EQ(y.strides(), (Shape{1, 4, 12}));
  EXPECT_EQ(x.transpose(-1, -2).sizes(), (Shape{2, 4, 3}));
  EXPECT_TRUE(tensor_equal(x.transpose(1, 1), x));
  EXPECT_TRUE(tensor_equal(iota({2, 3}).transpose(0, 1), tensor({{0, 3}, {1, 4}, {2, 5}}, on())));
  EXPECT_EQ(y.index({3, 2, 1}).item<int64_t>(), 23);  // x[1][2][3]
  EXPECT_TRUE(
      throws_error([&] { x.transpose(0, 3); }, ErrorKind::Index,
                   {"Dimension out of range (expected to be in range of [-3, 2], but got 3)"}));
}

TEST_P(ViewsTest, TOfTwoDimsAndFewer) {
  EXPECT_TRUE(tensor_equal(iota({2, 3}).t(), tensor({{0, 3}, {1, 4}, {2, 5}}, on())));
  EXPECT_EQ(iota({2, 3}).t().strides(), (Shape{1, 3}));
  Tensor v = iota({4});
  EXPECT_TRUE(tensor_equal(v.t(), v));
  EXPECT_EQ(scalar_tensor(1, on()).t().dim(), 0);
  EXPECT_TRUE(throws_error(
      [&] {
        iota({2, 3, 4}).t();
      },
      ErrorKind::Shape, {"expects a tensor with <= 2 dimensions", "3D"}));
}

TEST_P(ViewsTest, NarrowTakesARangeOfOneDim) {
  Tensor x = iota({3, 4});
  Tensor rows = x.narrow(0, 1, 2);
  EXPECT_EQ(rows.sizes(), (Shape{2, 4}));
  EXPECT_EQ(rows.storage_offset(), 4);
  EXPECT_TRUE(tensor_equal(rows, tensor({{4, 5, 6, 7}, {8, 9, 10, 11}}, on())));
  Tensor cols = x.narrow(1, -2, 2);  // negative start counts from the end
  EXPECT_EQ(cols.storage_offset(), 2);
  EXPECT_EQ(cols.strides(), (Shape{4, 1}));
  EXPECT_TRUE(tensor_equal(cols, tensor({{2, 3}, {6, 7}, {10, 11}}, on())));
  EXPECT_EQ(x.narrow(0, 3, 0).sizes(), (Shape{0, 4}));  // start == size with length 0 is allowed
  EXPECT_TRUE(
      throws_error([&] { x.narrow(1, 3, 2); }, ErrorKind::Index, {"exceeds dimension size (4)"}));
  EXPECT_TRUE(throws_error([&] { x.narrow(0, 4, 0); }, ErrorKind::Index, {"out of range"}));
  EXPECT_TRUE(throws_error([&] { x.narrow(0, 0, -1); }, ErrorKind::Index, {"length (-1)"}));
  EXPECT_TRUE(
      throws_error([&] { scalar_tensor(1, on()).narrow(0, 0, 1); }, ErrorKind::Shape, {"0-dim"}));
}

TEST_P(ViewsTest, SliceWithStepsAndPythonBounds) {
  Tensor x = iota({10});
  EXPECT_TRUE(tensor_equal(x.slice(0, 1, 8, 3), tensor({1, 4, 7}, on())));
  EXPECT_TRUE(
      tensor_equal(x.slice(0, std::nullopt, std::nullopt, 2), tensor({0, 2, 4, 6, 8}, on())));
  EXPECT_TRUE(tensor_equal(x.slice(0, -3), tensor({7, 8, 9}, on())));
  EXPECT_TRUE(tensor_equal(x.slice(0, std::nullopt, -7), tensor({0, 1, 2}, on())));
  // Out-of-range bounds clamp, as Python's x[-100:3] and x[5:100].
  EXPECT_TRUE(tensor_equal(x.slice(0, -100, 3), tensor({0, 1, 2}, on())));
  EXPECT_TRUE(tensor_equal(x.slice(0, 5, 100), tensor({5, 6, 7, 8, 9}, on())));
  EXPECT_TRUE(tensor_equal(x.slice(0, 7, 100, 2), tensor({7, 9}, on())));
  // Empty: start past the end, or start after stop.
  EXPECT_EQ(x.slice(0, 20, 30).sizes(), (Shape{0}));
  EXPECT_EQ(x.slice(0, 8, 3).sizes(), (Shape{0}));
  EXPECT_EQ(x.slice(0, -2, -5).sizes(), (Shape{0}));
  EXPECT_EQ(x.slice(0, 9, 10, 5).sizes(), (Shape{1}));
  // Strides and offset of a stepped slice of a 2-D tensor.
  Tensor m = iota({4, 5}).slice(1, 1, 5, 2);
  EXPECT_EQ(m.sizes(), (Shape{4, 2}));
  EXPECT_EQ(m.strides(), (Shape{5, 2}));
  EXPECT_EQ(m.storage_offset(), 1);
  EXPECT_TRUE(tensor_equal(m, tensor({{1, 3}, {6, 8}, {11, 13}, {16, 18}}, on())));
  EXPECT_TRUE(
      throws_error([&] { x.slice(0, 0, 5, 0); }, ErrorKind::Value, {"step must be positive"}));
  EXPECT_TRUE(
      throws_error([&] { x.slice(0, 0, 5, -1); }, ErrorKind::Value, {"step must be positive"}));
  EXPECT_TRUE(throws_error([&] { x.slice(1); }, ErrorKind::Index, {"Dimension out of range"}));
}

TEST_P(ViewsTest, SelectRemovesADim) {
  Tensor x = iota({3, 4});
  Tensor row = x.select(0, 1);
  EXPECT_EQ(row.sizes(), (Shape{4}));
  EXPECT_EQ(row.storage_offset(), 4);
  EXPECT_TRUE(tensor_equal(row, tensor({4, 5, 6, 7}, on())));
  Tensor col = x.select(1, -1);
  EXPECT_EQ(col.strides(), (Shape{4}));
  EXPECT_EQ(col.storage_offset(), 3);
  EXPECT_TRUE(tensor_equal(col, tensor({3, 7, 11}, on())));
  EXPECT_TRUE(tensor_equal(x.select(-2, -3), tensor({0, 1, 2, 3}, on())));
  EXPECT_EQ(x.select(0, 2).select(0, 1).dim(), 0);
  EXPECT_EQ(x.select(0, 2).select(0, 1).item<int64_t>(), 9);
  EXPECT_TRUE(throws_error([&] { x.select(0, 3); }, ErrorKind::Index,
                           {"index 3 is out of bounds for dimension 0 with size 3"}));
  EXPECT_TRUE(throws_error([&] { x.select(1, -5); }, ErrorKind::Index,
                           {"index -5 is out of bounds for dimension 1 with size 4"}));
  EXPECT_TRUE(
      throws_error([&] { scalar_tensor(1, on()).select(0, 0); }, ErrorKind::Index, {"0-dim"}));
}

TEST_P(ViewsTest, SubscriptOperatorSelectsAlongDimZero) {
  Tensor x = iota({3, 4});
  EXPECT_TRUE(tensor_equal(x[2], tensor({8, 9, 10, 11}, on())));
  EXPECT_TRUE(tensor_equal(x[-1], x[2]));
  EXPECT_EQ(x[1][2].item<int64_t>(), 6);
  EXPECT_EQ(x[-1][-1].item<int64_t>(), 11);
  EXPECT_EQ(x[1].storage(), x.storage());
  EXPECT_TRUE(throws_error([&] { x[3]; }, ErrorKind::Index, {"out of bounds"}));
}

TEST_P(ViewsTest, ExpandBroadcastsWithZeroStrides) {
  Tensor x = tensor({{1}, {2}, {3}}, on());  // (3, 1)
  Tensor e = x.expand({3, 4});
  EXPECT_EQ(e.sizes(), (Shape{3, 4}));
  EXPECT_EQ(e.strides(), (Shape{1, 0}));
  EXPECT_EQ(e.storage(), x.storage());
  EXPECT_FALSE(e.is_contiguous());
  EXPECT_TRUE(tensor_equal(e, tensor({{1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}, on())));
  EXPECT_EQ(x.expand({-1, 4}).sizes(), (Shape{3, 4}));
  EXPECT_EQ(x.expand({3, -1}).sizes(), (Shape{3, 1}));
  Tensor lead = x.expand({2, 3, 4});
  EXPECT_EQ(lead.sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(lead.strides(), (Shape{0, 1, 0}));
  EXPECT_EQ(values_of(lead.select(0, 1)), values_of(e));
  EXPECT_TRUE(
      tensor_equal(x.expand_as(zeros({3, 2}, on())), tensor({{1, 1}, {2, 2}, {3, 3}}, on())));
  EXPECT_EQ(scalar_tensor(7, on()).expand({2, 2}).strides(), (Shape{0, 0}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.expand({2, 4});
      },
      ErrorKind::Shape,
      {"expanded size of the tensor (2) must match the existing size (3) at "
       "non-singleton dimension 0"}));
  EXPECT_TRUE(
      throws_error([&] { x.expand({4}); }, ErrorKind::Shape, {"number of sizes provided (1)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.expand({-1, 3, 4});
      },
      ErrorKind::Shape, {"leading, non-existing dimension"}));
  // Writing into an expanded view would write one element several times.
  EXPECT_TRUE(throws_error([&] { e.fill_(0); }, ErrorKind::Value, {"single memory location"}));
}

TEST_P(ViewsTest, ContiguousCopiesOnlyWhenNeeded) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(x.contiguous().is_same(x));
  Tensor t = x.t();
  Tensor c = t.contiguous();
  EXPECT_FALSE(c.is_same(t));
  EXPECT_NE(c.storage(), x.storage());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.strides(), (Shape{2, 1}));
  EXPECT_TRUE(tensor_equal(c, tensor({{0, 3}, {1, 4}, {2, 5}}, on())));
  Tensor e = tensor({1, 2}, on()).expand({3, 2}).contiguous();
  EXPECT_EQ(e.strides(), (Shape{2, 1}));
  EXPECT_TRUE(tensor_equal(e, tensor({{1, 2}, {1, 2}, {1, 2}}, on())));
}

TEST_P(ViewsTest, IsContiguousFollowsPyTorch) {
  EXPECT_TRUE(iota({2, 3, 4}).is_contiguous());
  EXPECT_FALSE(iota({2, 3}).t().is_contiguous());
  EXPECT_TRUE(iota({4, 3}).slice(0, 1, 3).is_contiguous());              // whole rows
  EXPECT_FALSE(iota({4, 3}).slice(1, 0, 2).is_contiguous());             // part of each row
  EXPECT_FALSE(iota({8}).slice(0, 0, std::nullopt, 2).is_contiguous());  // stepped
  EXPECT_TRUE(iota({1, 5}).t().is_contiguous());  // size-1 dims' strides do not matter
  EXPECT_TRUE(iota({2, 3}).unsqueeze(0).is_contiguous());
  EXPECT_TRUE(zeros({0, 3}, on()).is_contiguous());
  EXPECT_TRUE(scalar_tensor(1, on()).is_contiguous());
  EXPECT_FALSE(tensor({1, 2}, on()).expand({2, 2}).is_contiguous());
}

TEST_P(ViewsTest, WritesThroughViewsChangeTheBase) {
  Tensor base = zeros({3, 4}, on());
  base.select(0, 1).fill_(7);                                // row 1
  base.t().select(0, 2).fill_(5);                            // column 2, through a transpose
  base.view({-1}).narrow(0, 0, 2).fill_(1);                  // first two elements
  base.slice(1, 1, std::nullopt, 2).select(0, 2).fill_(-1);  // row 2, columns 1 and 3
  EXPECT_TRUE(tensor_equal(
      base, tensor({{1.0, 1.0, 5.0, 0.0}, {7.0, 7.0, 5.0, 7.0}, {0.0, -1.0, 5.0, -1.0}}, on())));
  Tensor col = base.index({Slice(), 3});
  col.copy_(tensor({10, 20, 30}, on()));  // int64 source, converted on copy
  EXPECT_EQ(values_of(base.select(1, 3)), (std::vector<double>{10, 20, 30}));
  // A clone shares nothing.
  Tensor copy = base.clone();
  copy.fill_(0);
  EXPECT_EQ(base.index({2, 3}).item<double>(), 30);
}

TEST_P(ViewsTest, SizesStridesAndOffsets) {
  Tensor x = zeros({4, 5, 6}, on());
  EXPECT_EQ(x.strides(), (Shape{30, 6, 1}));
  EXPECT_EQ(x.storage_offset(), 0);
  Tensor y = x.index({1, Slice(1, None, 2), Slice(None, None, 3)});
  EXPECT_EQ(y.sizes(), (Shape{2, 2}));
  EXPECT_EQ(y.strides(), (Shape{12, 3}));
  EXPECT_EQ(y.storage_offset(), 36);  // 1 * 30 + 1 * 6
  EXPECT_EQ(y.size(-1), 2);
  EXPECT_EQ(y.stride(0), 12);
  EXPECT_EQ(y.stride(-1), 3);
  EXPECT_EQ(y.dim(), 2);
  EXPECT_EQ(y.numel(), 4);
  EXPECT_EQ(y.storage(), x.storage());
  // Offsets accumulate through chained views.
  Tensor z = y.select(0, 1).narrow(0, 1, 1);
  EXPECT_EQ(z.storage_offset(), 36 + 12 + 3);
  EXPECT_TRUE(
      throws_error([&] { y.size(2); }, ErrorKind::Index,
                   {"Dimension out of range (expected to be in range of [-2, 1], but got 2)"}));
  EXPECT_TRUE(throws_error([&] { y.stride(-3); }, ErrorKind::Index, {"but got -3"}));
}

TEST_P(ViewsTest, IndexWithIntegersAndSlices) {
  Tensor x = iota({2, 3, 4});
  EXPECT_TRUE(tensor_equal(x.index({1}), x[1]));
  EXPECT_TRUE(tensor_equal(x.index({1, 2}), tensor({20, 21, 22, 23}, on())));
  EXPECT_TRUE(tensor_equal(x.index({-1, -1}), tensor({20, 21, 22, 23}, on())));
  Tensor one = x.index({1, 2, 3});
  EXPECT_EQ(one.dim(), 0);
  EXPECT_EQ(one.item<int64_t>(), 23);
  EXPECT_TRUE(tensor_equal(x.index({Slice(), 1}), tensor({{4, 5, 6, 7}, {16, 17, 18, 19}}, on())));
  EXPECT_EQ(x.index({Slice(1, None)}).sizes(), (Shape{1, 3, 4}));
  EXPECT_TRUE(tensor_equal(x.index({0, Slice(None, None, 2), Slice(1, 3)}),
                           tensor({{1, 2}, {9, 10}}, on())));
  EXPECT_TRUE(tensor_equal(x.index({}), x));
  // The result is a view: writing through it changes x.
  x.index({Slice(), 1}).fill_(0);
  EXPECT_EQ(x.index({1, 1, 2}).item<int64_t>(), 0);
  EXPECT_EQ(x.index({1, 2, 2}).item<int64_t>(), 22);
}

TEST_P(ViewsTest, IndexWithNoneAndEllipsis) {
  Tensor x = iota({2, 3, 4});
  EXPECT_EQ(x.index({None}).sizes(), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(x.index({Slice(), None, 0}).sizes(), (Shape{2, 1, 4}));
  EXPECT_EQ(x.index({Ellipsis, None}).sizes(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(x.index({None, Ellipsis, None}).sizes(), (Shape{1, 2, 3, 4, 1}));
  EXPECT_TRUE(tensor_equal(x.index({Ellipsis, 0}), tensor({{0, 4, 8}, {12, 16, 20}}, on())));
  EXPECT_TRUE(
      tensor_equal(x.index({Ellipsis, 1, Slice(2, None)}), tensor({{6, 7}, {18, 19}}, on())));
  EXPECT_TRUE(tensor_equal(x.index({Ellipsis}), x));
  // x[0, ..., None, 1]: the ellipsis covers dim 1, None lands before the last dim.
  EXPECT_TRUE(tensor_equal(x.index({0, Ellipsis, None, 1}), tensor({{1}, {5}, {9}}, on())));
  EXPECT_TRUE(throws_error(
      [&] {
        x.index({0, 0, 0, 0});
      },
      ErrorKind::Index, {"too many indices for tensor of dimension 3"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.index({Ellipsis, Ellipsis});
      },
      ErrorKind::Index, {"single ellipsis"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.index({0, 3});
      },
      ErrorKind::Index, {"index 3 is out of bounds for dimension 0 with size 3"}));
  EXPECT_TRUE(throws_error([&] { scalar_tensor(1, on()).index({0}); }, ErrorKind::Index,
                           {"too many indices"}));
}

TEST_P(ViewsTest, DimensionOutOfRangeMessages) {
  Tensor x = zeros({2, 3}, on());
  const std::string range = "Dimension out of range (expected to be in range of [-2, 1], but got ";
  EXPECT_TRUE(
      throws_error([&] { x.transpose(0, 2); }, ErrorKind::Index, {"[transpose]", range + "2)"}));
  EXPECT_TRUE(
      throws_error([&] { x.select(-3, 0); }, ErrorKind::Index, {"[select]", range + "-3)"}));
  EXPECT_TRUE(throws_error([&] { x.squeeze(2); }, ErrorKind::Index, {"[squeeze]", range + "2)"}));
  EXPECT_TRUE(
      throws_error([&] { x.narrow(2, 0, 1); }, ErrorKind::Index, {"[narrow]", range + "2)"}));
  EXPECT_TRUE(throws_error([&] { x.slice(-3); }, ErrorKind::Index, {"[slice]", range + "-3)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.permute({0, 2});
      },
      ErrorKind::Index, {"[permute]", range + "2)"}));
  EXPECT_TRUE(
      throws_error([&] { x.flatten(0, 2); }, ErrorKind::Index, {"[flatten]", range + "2)"}));
  EXPECT_TRUE(throws_error([&] { x.size(-3); }, ErrorKind::Index, {range + "-3)"}));
  EXPECT_TRUE(throws_error([&] { x.unsqueeze(3); }, ErrorKind::Index,
                           {"[unsqueeze]", "expected to be in range of [-3, 2], but got 3)"}));
  EXPECT_TRUE(throws_error([&] { scalar_tensor(1, on()).transpose(0, 1); }, ErrorKind::Index,
                           {"expected to be in range of [-1, 0], but got 1)"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(ViewsTest);

}  // namespace
}  // namespace ember
