// tests/test_creation.cpp: making tensors -- ember::tensor from nested lists (shape and dtype
// inference), from_vector, scalar_tensor, zeros/ones/full/empty, eye, arange, linspace and the
// _like forms -- with their dtypes, devices, values and errors.
#include <cmath>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;
using testing::values_of;

class CreationTest : public testing::DeviceTest {
 protected:
  Device resolved() const { return resolve_device(device()); }
};

TEST_P(CreationTest, TensorFromNestedListsInfersShape) {
  Tensor m = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on());
  EXPECT_EQ(m.sizes(), (Shape{2, 3}));
  EXPECT_EQ(m.strides(), (Shape{3, 1}));
  EXPECT_EQ(m.device(), resolved());
  EXPECT_EQ(values_of(m), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  Tensor cube = tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}, on());
  EXPECT_EQ(cube.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(cube.index({1, 0, 1}).item<int64_t>(), 6);
  Tensor s = tensor(3.5, on());
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), 3.5f);
  EXPECT_EQ(tensor({7}, on()).sizes(), (Shape{1}));
  EXPECT_EQ(tensor({{7}}, on()).sizes(), (Shape{1, 1}));
}

TEST_P(CreationTest, TensorInfersDtypeAsPyTorch) {
  EXPECT_EQ(tensor({1.0, 2.0}, on()).dtype(), kFloat32);  // floats: the default dtype
  EXPECT_EQ(tensor({1, 2}, on()).dtype(), kInt64);
  EXPECT_EQ(tensor({true, false}, on()).dtype(), kBool);
  EXPECT_EQ(tensor({1, 2.5}, on()).dtype(), kFloat32);  // any float makes it float
  EXPECT_EQ(tensor({true, 2}, on()).dtype(), kInt64);   // bools with ints are ints
  EXPECT_EQ(tensor({{1}, {2.0}}, on()).dtype(), kFloat32);
  EXPECT_EQ(tensor(5, on()).dtype(), kInt64);
  EXPECT_EQ(tensor(false, on()).dtype(), kBool);
  EXPECT_TRUE(tensor_equal(tensor({true, false, true}, on()).to(kInt64), tensor({1, 0, 1}, on())));
  EXPECT_EQ(values_of(tensor({1, 2.5}, on())), (std::vector<double>{1.0, 2.5}));
}

TEST_P(CreationTest, TensorWithOptions) {
  Tensor d = tensor({1, 2, 3}, {.dtype = kFloat64, .device = device()});
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.device(), resolved());
  EXPECT_EQ(values_of(d), (std::vector<double>{1, 2, 3}));
  // Values go straight to the requested dtype, with no rounding through float32.
  EXPECT_EQ(tensor({0.1}, on(kFloat64)).item<double>(), 0.1);
  EXPECT_EQ(tensor(1.0 + 0x1p-40, on(kFloat64)).item<double>(), 1.0 + 0x1p-40);
  EXPECT_EQ(tensor({int64_t{1} << 53, 1}, on(kInt64)).index({0}).item<int64_t>(), int64_t{1} << 53);
  // Floats to integers truncate toward zero, as a cast does.
  EXPECT_TRUE(tensor_equal(tensor({1.7, -1.7}, on(kInt32)), tensor({1, -1}, on(kInt32))));
  EXPECT_TRUE(tensor_equal(tensor({0.0, 0.5}, on(kBool)), tensor({false, true}, on())));
  EXPECT_EQ(tensor({1, 2}, on(kUInt8)).dtype(), kUInt8);
}

TEST_P(CreationTest, RaggedListsThrowShapeErrors) {
  EXPECT_TRUE(throws_error(
      [&] {
        tensor({{1, 2}, {3}}, on());
      },
      ErrorKind::Shape, {"expected sequence of length 2 at dim 1"}));
  EXPECT_TRUE(throws_error(
      [&] {
        tensor({{1, 2}, 3}, on());
      },
      ErrorKind::Shape, {"expected a sequence at dim 1"}));
  // A number first and a list later is ragged too (torch.tensor([1, [2, 3]]) fails).
  EXPECT_TRUE(throws_error(
      [&] {
        tensor({1, {2, 3}}, on());
      },
      ErrorKind::Shape, {"expected a number at dim 1"}));
  EXPECT_TRUE(throws_error(
      [&] {
        tensor({{{1}, {2}}, {{3}, {4, 5}}}, on());
      },
      ErrorKind::Shape, {"at dim 2"}));
}

TEST_P(CreationTest, FromVectorWithAShape) {
  Tensor f = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}, on());
  EXPECT_EQ(f.sizes(), (Shape{2, 3}));
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(f.device(), resolved());
  EXPECT_TRUE(tensor_equal(f, tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on())));
  Tensor i = from_vector(std::vector<int32_t>{5, -6}, std::nullopt, on());
  EXPECT_EQ(i.sizes(), (Shape{2}));
  EXPECT_EQ(i.dtype(), kInt32);
  Tensor b = from_vector(std::vector<bool>{true, false, true}, std::nullopt, on());
  EXPECT_TRUE(tensor_equal(b, tensor({true, false, true}, on())));
  Tensor d = from_vector(std::vector<double>{0.1, 0.2}, Shape{2, 1}, on(kFloat32));
  EXPECT_EQ(d.dtype(), kFloat32);
  EXPECT_EQ(d.sizes(), (Shape{2, 1}));
  EXPECT_TRUE(throws_error(
      [&] {
        from_vector(std::vector<float>{1, 2, 3}, Shape{2, 2}, on());
      },
      ErrorKind::Shape, {"[2, 2]", "4 elements", "3"}));
}

TEST_P(CreationTest, ScalarTensor) {
  Tensor s = scalar_tensor(3, on());
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.dtype(), kFloat32);  // torch.scalar_tensor uses the default dtype, even for ints
  EXPECT_EQ(s.device(), resolved());
  EXPECT_EQ(s.item<double>(), 3.0);
  EXPECT_EQ(scalar_tensor(2.5, on(kFloat64)).item<double>(), 2.5);
  EXPECT_EQ(scalar_tensor(-4, on(kInt64)).item<int64_t>(), -4);
  EXPECT_EQ(scalar_tensor(true, on(kBool)).item<bool>(), true);
}

TEST_P(CreationTest, ZerosOnesFull) {
  Tensor z = zeros({2, 3}, on());
  EXPECT_EQ(z.dtype(), kFloat32);
  EXPECT_EQ(z.device(), resolved());
  EXPECT_EQ(values_of(z), std::vector<double>(6, 0.0));
  Tensor o = ones({4}, on(kInt64));
  EXPECT_TRUE(tensor_equal(o, tensor({1, 1, 1, 1}, on())));
  EXPECT_EQ(zeros({}, on()).dim(), 0);
  EXPECT_EQ(zeros({}, on()).numel(), 1);
  EXPECT_EQ(ones({0, 3}, on()).numel(), 0);
  // full infers its dtype from the value: float -> float32, int -> int64, bool -> bool.
  Tensor fi = full({2, 2}, 7, on());
  EXPECT_EQ(fi.dtype(), kInt64);
  EXPECT_TRUE(tensor_equal(fi, tensor({{7, 7}, {7, 7}}, on())));
  Tensor ff = full({3}, 2.5, on());
  EXPECT_EQ(ff.dtype(), kFloat32);
  EXPECT_EQ(values_of(ff), (std::vector<double>{2.5, 2.5, 2.5}));
  EXPECT_TRUE(tensor_equal(full({2}, true, on()), tensor({true, true}, on())));
  Tensor fd = full({2}, 7, on(kFloat64));  // options override the inferred dtype
  EXPECT_EQ(fd.dtype(), kFloat64);
  EXPECT_EQ(values_of(fd), (std::vector<double>{7, 7}));
}

TEST_P(CreationTest, Empty) {
  Tensor e = empty({2, 3, 4}, on(kFloat64));
  EXPECT_EQ(e.sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(e.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(e.dtype(), kFloat64);
  EXPECT_EQ(e.device(), resolved());
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_EQ(e.nbytes(), 24u * 8u);
  EXPECT_EQ(empty({0}, on()).numel(), 0);
  EXPECT_EQ(empty({3}, on()).dtype(), kFloat32);
}

TEST_P(CreationTest, Eye) {
  EXPECT_TRUE(tensor_equal(eye(3, std::nullopt, on()),
                           tensor({{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}}, on())));
  EXPECT_TRUE(
      tensor_equal(eye(2, 4, on()), tensor({{1.0, 0.0, 0.0, 0.0}, {0.0, 1.0, 0.0, 0.0}}, on())));
  EXPECT_TRUE(tensor_equal(eye(4, 2, on()),
                           tensor({{1.0, 0.0}, {0.0, 1.0}, {0.0, 0.0}, {0.0, 0.0}}, on())));
  EXPECT_TRUE(tensor_equal(eye(1, std::nullopt, on()), tensor({{1.0}}, on())));
  EXPECT_EQ(eye(0, std::nullopt, on()).sizes(), (Shape{0, 0}));
  EXPECT_EQ(eye(3, 0, on()).sizes(), (Shape{3, 0}));
  Tensor i = eye(2, std::nullopt, on(kInt64));
  EXPECT_TRUE(tensor_equal(i, tensor({{1, 0}, {0, 1}}, on())));
  EXPECT_EQ(eye(5, 7, on()).sum().item<double>(), 5.0);
  EXPECT_TRUE(
      throws_error([&] { eye(-1, std::nullopt, on()); }, ErrorKind::Value, {"non-negative"}));
}

TEST_P(CreationTest, ArangeIntegerAndFloatDtypes) {
  Tensor a = arange(5, on());
  EXPECT_EQ(a.dtype(), kInt64);
  EXPECT_EQ(a.device(), resolved());
  EXPECT_TRUE(tensor_equal(a, tensor({0, 1, 2, 3, 4}, on())));
  EXPECT_TRUE(tensor_equal(arange(1, 10, 3, on()), tensor({1, 4, 7}, on())));
  EXPECT_TRUE(tensor_equal(arange(-3, 3, 1, on()), tensor({-3, -2, -1, 0, 1, 2}, on())));
  Tensor f = arange(5.0, on());  // any float argument makes it float32
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(values_of(f), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(0, 3, 0.5, on()).dtype(), kFloat32);
  EXPECT_EQ(arange(0, 3, 1, on(kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(values_of(arange(0.5, 2, 1, on())), (std::vector<double>{0.5, 1.5}));
  EXPECT_EQ(arange(5, 5, 1, on()).sizes(), (Shape{0}));
}

TEST_P(CreationTest, ArangeNegativeStep) {
  EXPECT_TRUE(tensor_equal(arange(10, 0, -3, on()), tensor({10, 7, 4, 1}, on())));
  EXPECT_TRUE(tensor_equal(arange(0, -10, -4, on()), tensor({0, -4, -8}, on())));
  EXPECT_EQ(values_of(arange(1, 0, -0.25, on())), (std::vector<double>{1, 0.75, 0.5, 0.25}));
}

TEST_P(CreationTest, ArangeCountForNonIntegerSteps) {
  // ceil((end - start) / step) elements, as torch.arange: arange(0, 1, 0.1) has 10.
  Tensor t = arange(0, 1, 0.1, on());
  EXPECT_EQ(t.sizes(), (Shape{10}));
  std::vector<double> want;
  for (int i = 0; i < 10; ++i) want.push_back(i * 0.1);
  EXPECT_TRUE(tensor_close(t, from_vector(want, std::nullopt, on())));
  EXPECT_LT(values_of(t).back(), 1.0);
  EXPECT_EQ(arange(0, 1, 0.3, on()).numel(), 4);  // 0, 0.3, 0.6, 0.9
  EXPECT_EQ(arange(0, 0.9, 0.3, on()).numel(), 3);
  EXPECT_EQ(arange(-1, 1, 0.5, on()).numel(), 4);
}

TEST_P(CreationTest, ArangeErrors) {
  EXPECT_TRUE(
      throws_error([&] { arange(0, 10, 0, on()); }, ErrorKind::Value, {"step must be nonzero"}));
  EXPECT_TRUE(
      throws_error([&] { arange(0, 1, 0.0, on()); }, ErrorKind::Value, {"step must be nonzero"}));
  EXPECT_TRUE(throws_error([&] { arange(0, 10, -1, on()); }, ErrorKind::Value,
                           {"inconsistent with step sign"}));
  EXPECT_TRUE(throws_error([&] { arange(10, 0, 1, on()); }, ErrorKind::Value,
                           {"inconsistent with step sign"}));
  EXPECT_TRUE(
      throws_error([&] { arange(-5, on()); }, ErrorKind::Value, {"inconsistent with step sign"}));
}

TEST_P(CreationTest, LinspaceEndpointsAreExact) {
  Tensor l = linspace(0, 1, 5, on());
  EXPECT_EQ(l.dtype(), kFloat32);
  EXPECT_EQ(l.device(), resolved());
  EXPECT_EQ(values_of(l), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  Tensor odd = linspace(-1.3, 2.7, 7, on());
  std::vector<double> v = values_of(odd);
  EXPECT_EQ(v.front(), static_cast<double>(-1.3f));
  EXPECT_EQ(v.back(), static_cast<double>(2.7f));
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(v[i], -1.3 + i * 4.0 / 6.0, 1e-6) << i;
  Tensor d = linspace(0.1, 0.7, 4, on(kFloat64));
  EXPECT_EQ(values_of(d).front(), 0.1);
  EXPECT_EQ(values_of(d).back(), 0.7);
  EXPECT_TRUE(
      tensor_equal(linspace(10, 0, 6, on()), tensor({10.0, 8.0, 6.0, 4.0, 2.0, 0.0}, on())));
}

TEST_P(CreationTest, LinspaceOneAndZeroSteps) {
  // torch.linspace(start, end, 1) is [start] (aten special-cases steps == 1 with fill_(start)).
  EXPECT_TRUE(tensor_equal(linspace(3, 10, 1, on()), tensor({3.0}, on())));
  EXPECT_EQ(linspace(3, 10, 0, on()).sizes(), (Shape{0}));
  EXPECT_TRUE(tensor_equal(linspace(2, 5, 2, on()), tensor({2.0, 5.0}, on())));
  EXPECT_TRUE(throws_error([&] { linspace(0, 1, -1, on()); }, ErrorKind::Value, {"non-negative"}));
}

TEST_P(CreationTest, LikeFormsKeepDtypeAndDevice) {
  Tensor base = ones({2, 3}, on(kFloat64));
  for (Tensor t : {zeros_like(base), ones_like(base), empty_like(base), full_like(base, 4),
                   rand_like(base), randn_like(base), randint_like(base, 0, 5)}) {
    EXPECT_EQ(t.sizes(), base.sizes());
    EXPECT_EQ(t.dtype(), kFloat64);
    EXPECT_EQ(t.device(), resolved());
  }
  EXPECT_EQ(values_of(zeros_like(base)), std::vector<double>(6, 0.0));
  EXPECT_EQ(values_of(ones_like(base)), std::vector<double>(6, 1.0));
  EXPECT_EQ(values_of(full_like(base, 4)), std::vector<double>(6, 4.0));  // int value, float64 kept
  Tensor ints = arange(6, on(kInt32)).view({2, 3});
  Tensor r = randint_like(ints, 3, 5);
  EXPECT_EQ(r.dtype(), kInt32);
  for (double v : values_of(r)) EXPECT_TRUE(v == 3 || v == 4) << v;
  EXPECT_EQ(full_like(ints, 2.7).dtype(), kInt32);
  EXPECT_EQ(values_of(full_like(ints, 2.7)), std::vector<double>(6, 2.0));
  for (double v : values_of(rand_like(base))) EXPECT_TRUE(v >= 0 && v < 1) << v;
  // Explicit options take precedence.
  Tensor o = zeros_like(base, TensorOptions{.dtype = kInt32, .device = device()});
  EXPECT_EQ(o.dtype(), kInt32);
  EXPECT_EQ(o.device(), resolved());
  // The like form of a view is a new tensor of the view's sizes.
  Tensor v = zeros_like(base.t());
  EXPECT_EQ(v.sizes(), (Shape{3, 2}));
  EXPECT_NE(v.storage(), base.storage());
}

TEST_P(CreationTest, NegativeDimensionsAreRejected) {
  EXPECT_TRUE(throws_error(
      [&] {
        zeros({2, -1}, on());
      },
      ErrorKind::Shape, {"Trying to create tensor with negative dimension -1", "[2, -1]"}));
  EXPECT_TRUE(
      throws_error([&] { empty({-3}, on()); }, ErrorKind::Shape, {"negative dimension -3"}));
  EXPECT_TRUE(throws_error([&] { ones({-1, 2}, on()); }, ErrorKind::Shape, {"negative dimension"}));
  EXPECT_TRUE(
      throws_error([&] { full({-2}, 1.0, on()); }, ErrorKind::Shape, {"negative dimension"}));
  EXPECT_TRUE(throws_error([&] { rand({4, -4}, on()); }, ErrorKind::Shape, {"negative dimension"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(CreationTest);

}  // namespace
}  // namespace ember
