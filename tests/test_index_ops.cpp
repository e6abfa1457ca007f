// tests/test_index_ops.cpp: joining and indexing ops -- cat, stack, index_select, gather,
// scatter_add(_), masked_fill(_) and one_hot -- against values worked out by hand or taken from
// the PyTorch documentation, and their error messages.
#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_equal;
using testing::throws_error;
using testing::values_of;

class IndexOpsTest : public testing::DeviceTest {
 protected:
  // 0, 1, 2, ... as int64, laid out contiguously in `shape`.
  Tensor iota(const Shape& shape, DType dtype = kInt64) const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return arange(n, on(dtype)).view(shape);
  }
};

TEST_P(IndexOpsTest, CatAlongEachDim) {
  Tensor a = iota({2, 3}), b = iota({2, 3}) + 6;
  EXPECT_TRUE(
      tensor_equal(cat({a, b}), tensor({{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}}, on())));
  Tensor by_cols = tensor({{0, 1, 2, 6, 7, 8}, {3, 4, 5, 9, 10, 11}}, on());
  EXPECT_TRUE(tensor_equal(cat({a, b}, 1), by_cols));
  EXPECT_TRUE(tensor_equal(cat({a, b}, -1), by_cols));
  EXPECT_TRUE(tensor_equal(cat({a, b}, -2), cat({a, b}, 0)));
  // Different sizes along the cat dim, three inputs, a non-contiguous input.
  EXPECT_TRUE(tensor_equal(cat({a, a.select(0, 1).unsqueeze(0), b.narrow(0, 0, 1)}),
                           tensor({{0, 1, 2}, {3, 4, 5}, {3, 4, 5}, {6, 7, 8}}, on())));
  EXPECT_TRUE(tensor_equal(cat({a.t(), b.t()}, 1),
                           tensor({{0, 3, 6, 9}, {1, 4, 7, 10}, {2, 5, 8, 11}}, on())));
  Tensor one = cat({a});
  EXPECT_TRUE(tensor_equal(one, a));
  EXPECT_NE(one.storage(), a.storage());  // always a new tensor
  EXPECT_EQ(one.device(), a.device());
}

TEST_P(IndexOpsTest, CatPromotesDtypes) {
  Tensor r = cat({tensor({1, 2}, on()), tensor({0.5}, on())});
  EXPECT_TRUE(tensor_equal(r, tensor({1.0, 2.0, 0.5}, on())));
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(cat({iota({2}, kInt32), iota({2})}).dtype(), kInt64);
  EXPECT_EQ(cat({tensor({true}, on()), tensor({2}, on(kUInt8))}).dtype(), kUInt8);
  EXPECT_TRUE(tensor_equal(cat({tensor({true, false}, on()), tensor({7}, on(kInt32))}),
                           tensor({1, 0, 7}, on(kInt32))));
  EXPECT_EQ(cat({iota({2}, kFloat32), iota({2}, kFloat64)}).dtype(), kFloat64);
}

TEST_P(IndexOpsTest, CatSkipsLegacyEmptyOneDimTensors) {
  Tensor x = iota({2, 3});
  Tensor legacy = zeros({0}, on(kInt64));
  EXPECT_TRUE(tensor_equal(cat({legacy, x}), x));
  EXPECT_TRUE(tensor_equal(cat({x, legacy, x}, 1), cat({x, x}, 1)));
  // The skipped tensors still take part in type promotion: aten's cat computes its dtype with
  // result_type over every input (TORCH_META_FUNC(cat) in aten/src/ATen/native/TensorShape.cpp).
  Tensor promoted = cat({zeros({0}, on(kFloat32)), x});
  EXPECT_EQ(promoted.dtype(), kFloat32);
  EXPECT_TRUE(tensor_equal(promoted, x.to(kFloat32)));
  // All legacy-empty: an empty result.
  Tensor empty = cat({zeros({0}, on(kInt32)), zeros({0}, on(kFloat64))});
  EXPECT_EQ(empty.sizes(), (Shape{0}));
  EXPECT_EQ(empty.dtype(), kFloat64);
  // Empty tensors with more dims are not skipped: they must match and add nothing.
  EXPECT_TRUE(tensor_equal(cat({zeros({0, 3}, on(kInt64)), x}), x));
  EXPECT_TRUE(throws_error(
      [&] {
        cat({zeros({0, 2}, on(kInt64)), x});
      },
      ErrorKind::Shape, {"Expected size 2 but got size 3 for tensor number 1"}));
}

TEST_P(IndexOpsTest, CatErrorsNameTheSizes) {
  Tensor a = zeros({2, 3}, on());
  EXPECT_TRUE(throws_error(
      [&] {
        cat({a, zeros({2, 4}, on())});
      },
      ErrorKind::Shape,
      {"Sizes of tensors must match except in dimension 0",
       "Expected size 3 but got size 4 for tensor number 1 in the list", "[2, 3] vs [2, 4]"}));
  // Positions count the skipped legacy empty tensors, as PyTorch's do.
  EXPECT_TRUE(throws_error(
      [&] {
        cat({zeros({0}, on()), a, zeros({3, 3}, on())}, 1);
      },
      ErrorKind::Shape,
      {"except in dimension 1",
       "Expected size 2 but got size 3 for tensor "
       "number 2 in the list"}));
  EXPECT_TRUE(throws_error(
      [&] {
        cat({a, zeros({3}, on())});
      },
      ErrorKind::Shape, {"Tensors must have same number of dimensions: got 2 and 1"}));
  EXPECT_TRUE(throws_error([&] { cat({scalar_tensor(1, on())}); }, ErrorKind::Shape,
                           {"zero-dimensional tensor"}));
  EXPECT_TRUE(throws_error(
      [&] {
        cat({a, a}, 2);
      },
      ErrorKind::Index,
      {"Dimension out of range (expected to be in range of [-2, 1], but got 2)"}));
  EXPECT_TRUE(throws_error([] { cat({}); }, ErrorKind::Value, {"non-empty list"}));
}

TEST_P(IndexOpsTest, StackAddsADim) {
  Tensor a = iota({2, 3}), b = iota({2, 3}) + 6;
  Tensor s0 = stack({a, b});
  EXPECT_EQ(s0.sizes(), (Shape{2, 2, 3}));
  EXPECT_TRUE(tensor_equal(s0.select(0, 0), a));
  EXPECT_TRUE(tensor_equal(s0.select(0, 1), b));
  EXPECT_TRUE(tensor_equal(stack({a, b}, 1),
                           tensor({{{0, 1, 2}, {6, 7, 8}}, {{3, 4, 5}, {9, 10, 11}}}, on())));
  Tensor last = tensor({{{0, 6}, {1, 7}, {2, 8}}, {{3, 9}, {4, 10}, {5, 11}}}, on());
  EXPECT_TRUE(tensor_equal(stack({a, b}, 2), last));
  EXPECT_TRUE(tensor_equal(stack({a, b}, -1), last));
  EXPECT_TRUE(tensor_equal(stack({scalar_tensor(1, on(kInt64)), scalar_tensor(2, on(kInt64))}),
                           tensor({1, 2}, on())));
  EXPECT_EQ(stack({a, b.to(kFloat64)}).dtype(), kFloat64);
  EXPECT_TRUE(throws_error(
      [&] {
        stack({a, iota({3, 2})});
      },
      ErrorKind::Shape,
      {"stack expects each tensor to be equal size", "[2, 3] at entry 0", "[3, 2] at entry 1"}));
  EXPECT_TRUE(throws_error(
      [&] {
        stack({a, b}, 3);
      },
      ErrorKind::Index,
      {"Dimension out of range (expected to be in range of [-3, 2], but got 3)"}));
}

TEST_P(IndexOpsTest, IndexSelectWithInt64AndInt32Indices) {
  Tensor x = iota({3, 4}, kFloat32);
  EXPECT_TRUE(tensor_equal(x.index_select(0, tensor({2, 0}, on())),
                           tensor({{8.0, 9.0, 10.0, 11.0}, {0.0, 1.0, 2.0, 3.0}}, on())));
  Tensor cols = tensor({{3.0, 3.0, 1.0}, {7.0, 7.0, 5.0}, {11.0, 11.0, 9.0}}, on());
  EXPECT_TRUE(tensor_equal(index_select(x, 1, tensor({3, 3, 1}, on(kInt32))), cols));
  EXPECT_TRUE(tensor_equal(index_select(x, -1, tensor({3, 3, 1}, on())), cols));
  // Non-contiguous input and a strided index.
  EXPECT_TRUE(tensor_equal(x.t().index_select(0, tensor({1, 0, 3}, on()).slice(0, 0, 3, 2)),
                           tensor({{1.0, 5.0, 9.0}, {3.0, 7.0, 11.0}}, on())));
  // An empty index gives an empty dim.
  EXPECT_EQ(x.index_select(0, zeros({0}, on(kInt64))).sizes(), (Shape{0, 4}));
}

TEST_P(IndexOpsTest, IndexSelectWithZeroDimIndexKeepsTheDim) {
  Tensor x = iota({3, 4});
  Tensor r = x.index_select(0, scalar_tensor(1, on(kInt64)));
  EXPECT_EQ(r.sizes(), (Shape{1, 4}));  // torch.index_select with a 0-dim index keeps a size-1 dim
  EXPECT_TRUE(tensor_equal(r, tensor({{4, 5, 6, 7}}, on())));
  // A 0-dim input takes a one-element index.
  Tensor s = scalar_tensor(5, on(kInt64));
  EXPECT_TRUE(tensor_equal(s.index_select(0, tensor({0}, on())), s));
  EXPECT_TRUE(throws_error([&] { s.index_select(0, zeros({0}, on(kInt64))); }, ErrorKind::Index,
                           {"Index to scalar can have only 1 value, got 0"}));
}

TEST_P(IndexOpsTest, IndexSelectErrors) {
  Tensor x = iota({3, 4});
  EXPECT_TRUE(throws_error(
      [&] {
        x.index_select(0, tensor({0, 3}, on()));
      },
      ErrorKind::Index, {"index 3 is out of bounds for dimension 0 with size 3"}));
  EXPECT_TRUE(throws_error([&] { x.index_select(1, tensor({-1}, on())); }, ErrorKind::Index,
                           {"index -1 is out of bounds for dimension 1 with size 4"}));
  EXPECT_TRUE(throws_error([&] { x.index_select(0, tensor({0.0}, on())); }, ErrorKind::DType,
                           {"int64 or int32"}));
  EXPECT_TRUE(throws_error([&] { x.index_select(0, tensor({{0}}, on())); }, ErrorKind::Shape,
                           {"index must be 1-D or 0-D"}));
  EXPECT_TRUE(throws_error([&] { x.index_select(2, tensor({0}, on())); }, ErrorKind::Index,
                           {"Dimension out of range"}));
}

TEST_P(IndexOpsTest, GatherTwoDims) {
  // The example of torch.gather's documentation.
  Tensor t = tensor({{1, 2}, {3, 4}}, on());
  EXPECT_TRUE(
      tensor_equal(t.gather(1, tensor({{0, 0}, {1, 0}}, on())), tensor({{1, 1}, {4, 3}}, on())));
  EXPECT_TRUE(tensor_equal(gather(t, 0, tensor({{0, 1}, {1, 0}}, on(kInt32))),
                           tensor({{1, 4}, {3, 2}}, on())));
  // The index may be smaller than the input in the other dims, and non-contiguous inputs work.
  Tensor x = iota({3, 4}, kFloat64);
  EXPECT_TRUE(
      tensor_equal(x.gather(1, tensor({{3}, {0}}, on())), tensor({{3.0}, {4.0}}, on(kFloat64))));
  EXPECT_TRUE(tensor_equal(x.t().gather(-1, tensor({{2, 0}, {1, 1}}, on())),
                           tensor({{8.0, 0.0}, {5.0, 5.0}}, on(kFloat64))));
}

TEST_P(IndexOpsTest, GatherThreeDimsEachDim) {
  Shape shape{2, 3, 4};
  Tensor x = iota(shape) * 10;  // x[i][j][k] = 10 * (12 i + 4 j + k)
  // index[i][j][k] = (i + 2 j + 3 k) % shape[dim]: every position picks a different source.
  for (int64_t dim = 0; dim < 3; ++dim) {
    std::vector<int64_t> idx;
    std::vector<double> expected;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k) {
          int64_t v = (i + 2 * j + 3 * k) % shape[dim];
          idx.push_back(v);
          int64_t c[3] = {i, j, k};
          c[dim] = v;  // out[i][j][k] = x[..index[i][j][k] at dim..]
          expected.push_back(10.0 * static_cast<double>(12 * c[0] + 4 * c[1] + c[2]));
        }
    Tensor index = from_vector(idx, shape, on());
    Tensor out = x.gather(dim, index);
    EXPECT_EQ(out.sizes(), shape) << "dim " << dim;
    EXPECT_EQ(values_of(out), expected) << "dim " << dim;
    EXPECT_TRUE(tensor_equal(x.gather(dim - 3, index), out)) << "dim " << dim;
  }
}

TEST_P(IndexOpsTest, GatherErrors) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(throws_error([&] { x.gather(1, tensor({{3}}, on())); }, ErrorKind::Index,
                           {"index 3 is out of bounds for dimension 1 with size 3"}));
  EXPECT_TRUE(throws_error([&] { x.gather(1, tensor({0}, on())); }, ErrorKind::Shape,
                           {"same number of dimensions"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.gather(1, zeros({3, 1}, on(kInt64)));
      },
      ErrorKind::Shape, {"Size does not match at dimension 0"}));
  EXPECT_TRUE(
      throws_error([&] { x.gather(0, tensor({{0.0}}, on())); }, ErrorKind::DType, {"int64"}));
}

TEST_P(IndexOpsTest, ScatterAddAccumulatesDuplicates) {
  // The examples of torch.Tensor.scatter_add_'s documentation.
  Tensor src = ones({2, 5}, on());
  Tensor r1 = zeros({3, 5}, on()).scatter_add_(0, tensor({{0, 1, 2, 0, 0}}, on()), src);
  EXPECT_TRUE(tensor_equal(
      r1, tensor({{1.0, 0.0, 0.0, 1.0, 1.0}, {0.0, 1.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 1.0, 0.0, 0.0}},
                 on())));
  Tensor r2 =
      zeros({3, 5}, on()).scatter_add_(0, tensor({{0, 1, 2, 0, 0}, {0, 1, 2, 2, 2}}, on()), src);
  EXPECT_TRUE(tensor_equal(
      r2, tensor({{2.0, 0.0, 0.0, 1.0, 1.0}, {0.0, 2.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 2.0, 1.0, 1.0}},
                 on())));
  // Along dim 1, int64, onto non-zero values.
  Tensor x = full({2, 3}, 100, on(kInt64));
  Tensor r3 =
      x.scatter_add(1, tensor({{0, 0, 2}, {1, 1, 1}}, on()), tensor({{1, 2, 3}, {4, 5, 6}}, on()));
  EXPECT_TRUE(tensor_equal(r3, tensor({{103, 100, 103}, {100, 115, 100}}, on())));
  EXPECT_TRUE(tensor_equal(x, full({2, 3}, 100, on(kInt64))));  // the out-of-place form copies
}

TEST_P(IndexOpsTest, ScatterAddInPlaceWritesThroughAView) {
  Tensor base = zeros({3, 2}, on());
  Tensor v = base.t();  // (2, 3), non-contiguous
  Tensor& r = v.scatter_add_(1, tensor({{2, 2}, {0, 1}}, on(kInt32)),
                             tensor({{1.0, 2.0}, {3.0, 4.0}}, on()));
  EXPECT_TRUE(&r == &v);
  EXPECT_TRUE(tensor_equal(base, tensor({{0.0, 3.0}, {0.0, 4.0}, {3.0, 0.0}}, on())));
  // Function form, with an index smaller than src.
  Tensor out =
      scatter_add(zeros({4}, on()), 0, tensor({3, 3}, on()), tensor({1.5, 2.5, 9.0}, on()));
  EXPECT_TRUE(tensor_equal(out, tensor({0.0, 0.0, 0.0, 4.0}, on())));
}

TEST_P(IndexOpsTest, ScatterAddErrors) {
  Tensor x = zeros({2, 3}, on());
  EXPECT_TRUE(throws_error(
      [&] {
        x.scatter_add(1, tensor({{3}}, on()), ones({1, 1}, on()));
      },
      ErrorKind::Index, {"index 3 is out of bounds for dimension 1 with size 3"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.scatter_add(0, tensor({{0}}, on()), ones({1, 1}, on(kFloat64)));
      },
      ErrorKind::DType, {"src.dtype"}));
  EXPECT_TRUE(throws_error([&] { x.scatter_add(0, tensor({0}, on()), ones({1}, on())); },
                           ErrorKind::Shape, {"same number of dimensions"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.scatter_add(0, zeros({1, 2}, on(kInt64)), ones({1, 1}, on()));
      },
      ErrorKind::Shape, {"smaller than src"}));
}

TEST_P(IndexOpsTest, MaskedFill) {
  Tensor x = iota({2, 3}, kFloat32);
  Tensor mask = tensor({{true, false, true}, {false, false, true}}, on());
  EXPECT_TRUE(
      tensor_equal(x.masked_fill(mask, -1.5), tensor({{-1.5, 1.0, -1.5}, {3.0, 4.0, -1.5}}, on())));
  EXPECT_TRUE(tensor_equal(x, iota({2, 3}, kFloat32)));  // unchanged
  // A mask that broadcasts over rows; an integer tensor.
  Tensor y = iota({2, 3});
  Tensor& r = y.masked_fill_(tensor({false, true, false}, on()), 7);
  EXPECT_TRUE(&r == &y);
  EXPECT_TRUE(tensor_equal(y, tensor({{0, 7, 2}, {3, 7, 5}}, on())));
  EXPECT_TRUE(tensor_equal(masked_fill(y, tensor(true, on()), 0), zeros({2, 3}, on(kInt64))));
  EXPECT_TRUE(throws_error(
      [&] {
        x.masked_fill(tensor({1, 0, 1}, on()), 0);
      },
      ErrorKind::DType, {"boolean masks"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.masked_fill(tensor({true, false}, on()), 0);
      },
      ErrorKind::Shape, {}));
}

TEST_P(IndexOpsTest, OneHot) {
  Tensor r = one_hot(tensor({0, 2, 1}, on()));  // num_classes inferred: max + 1 = 3
  EXPECT_TRUE(tensor_equal(r, tensor({{1, 0, 0}, {0, 0, 1}, {0, 1, 0}}, on())));
  EXPECT_EQ(r.device(), resolve_device(device()));
  EXPECT_TRUE(tensor_equal(one_hot(tensor({1, 3}, on()), 5),
                           tensor({{0, 1, 0, 0, 0}, {0, 0, 0, 1, 0}}, on())));
  Tensor two = one_hot(tensor({{0, 1}, {1, 0}}, on()));
  EXPECT_EQ(two.sizes(), (Shape{2, 2, 2}));
  EXPECT_TRUE(tensor_equal(two, tensor({{{1, 0}, {0, 1}}, {{0, 1}, {1, 0}}}, on())));
  EXPECT_TRUE(tensor_equal(one_hot(scalar_tensor(2, on(kInt64)), 4), tensor({0, 0, 1, 0}, on())));
  EXPECT_EQ(one_hot(zeros({0}, on(kInt64)), 4).sizes(), (Shape{0, 4}));
  EXPECT_TRUE(throws_error(
      [&] {
        one_hot(tensor({0, -1}, on()));
      },
      ErrorKind::Value, {"Class values must be non-negative."}));
  EXPECT_TRUE(throws_error(
      [&] {
        one_hot(tensor({0, 3}, on()), 3);
      },
      ErrorKind::Value, {"Class values must be smaller than num_classes."}));
  EXPECT_TRUE(throws_error([&] { one_hot(zeros({0}, on(kInt64))); }, ErrorKind::Value,
                           {"Can not infer total number of classes from empty tensor."}));
  EXPECT_TRUE(throws_error(
      [&] {
        one_hot(tensor({0, 1}, on(kInt32)));
      },
      ErrorKind::DType, {"int64"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(IndexOpsTest);

}  // namespace
}  // namespace ember
