// tests/test_dtype.cpp: dtypes -- sizes, names, promote_types and can_cast against PyTorch's own
// answers for every pair (tests/reference/promote_types.txt), the dtype of Scalars --
// and PyTorch's result_type rules for dimensioned tensors, 0-dim tensors and Scalars, checked both
// through result_type() and through the dtype and values an element-wise op actually returns.
//
// The promotion rules are those of aten/src/ATen/native/TypeProperties.cpp: operands fall into
// three groups (dimensioned tensors > 0-dim tensors > wrapped numbers, i.e. Scalars); each group
// is promoted within itself, a floating Scalar counting as the default dtype (float32); then
// combine_categories(higher, lower) keeps the higher group unless the lower one is of a higher
// kind (floating over integral, anything over bool), in which case the two are promoted.
#include <array>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_equal;

constexpr auto kAll = kAllDTypes;

TEST(DType, ElementSizes) {
  EXPECT_EQ(element_size(kBool), 1u);
  EXPECT_EQ(element_size(kUInt8), 1u);
  EXPECT_EQ(element_size(kInt32), 4u);
  EXPECT_EQ(element_size(kInt64), 8u);
  EXPECT_EQ(element_size(kFloat32), 4u);
  EXPECT_EQ(element_size(kFloat64), 8u);
  for (DType t : kAll) {
    Tensor x = zeros({2, 3}, {.dtype = t});
    EXPECT_EQ(x.element_size(), element_size(t)) << t;
    EXPECT_EQ(x.nbytes(), 6 * element_size(t)) << t;
  }
  static_assert(element_size(kFloat64) == sizeof(double));
  static_assert(element_size(kInt32) == sizeof(int32_t));
}

TEST(DType, NamesAsInTorch) {
  EXPECT_STREQ(dtype_name(kBool), "bool");
  EXPECT_STREQ(dtype_name(kUInt8), "uint8");
  EXPECT_STREQ(dtype_name(kInt32), "int32");
  EXPECT_STREQ(dtype_name(kInt64), "int64");
  EXPECT_STREQ(dtype_name(kFloat32), "float32");
  EXPECT_STREQ(dtype_name(kFloat64), "float64");
  std::ostringstream os;
  os << kFloat64 << " " << kUInt8;
  EXPECT_EQ(os.str(), "float64 uint8");
}

TEST(DType, AliasesMatchTorch) {
  // torch.float is float32, torch.double float64, torch.long int64, torch.int int32,
  // torch.uint8 is torch.ByteTensor's type.
  EXPECT_EQ(kFloat, kFloat32);
  EXPECT_EQ(kDouble, kFloat64);
  EXPECT_EQ(kLong, kInt64);
  EXPECT_EQ(kInt, kInt32);
  EXPECT_EQ(kByte, kUInt8);
}

TEST(DType, Categories) {
  EXPECT_TRUE(is_floating_point(kFloat32));
  EXPECT_TRUE(is_floating_point(kFloat64));
  for (DType t : {kBool, kUInt8, kInt32, kInt64}) EXPECT_FALSE(is_floating_point(t)) << t;
  for (DType t : {kUInt8, kInt32, kInt64}) {
    EXPECT_TRUE(is_integral(t, false)) << t;
    EXPECT_TRUE(is_integral(t, true)) << t;
  }
  EXPECT_FALSE(is_integral(kBool, false));
  EXPECT_TRUE(is_integral(kBool, true));
  EXPECT_FALSE(is_integral(kFloat32, true));
  EXPECT_TRUE(zeros({1}, {.dtype = kFloat64}).is_floating_point());
  EXPECT_FALSE(zeros({1}, {.dtype = kInt64}).is_floating_point());
}

TEST(DType, DtypeOfCppTypes) {
  EXPECT_EQ(dtype_of<bool>(), kBool);
  EXPECT_EQ(dtype_of<uint8_t>(), kUInt8);
  EXPECT_EQ(dtype_of<int32_t>(), kInt32);
  EXPECT_EQ(dtype_of<int64_t>(), kInt64);
  EXPECT_EQ(dtype_of<long long>(), kInt64);
  EXPECT_EQ(dtype_of<float>(), kFloat32);
  EXPECT_EQ(dtype_of<const double>(), kFloat64);
}

TEST(DType, DefaultDtypeIsFloat32) {
  // torch.get_default_dtype() is torch.float32 unless changed.
  EXPECT_EQ(default_dtype(), kFloat32);
  EXPECT_EQ(zeros({2}).dtype(), kFloat32);
}

TEST(DType, ScalarKindsAndDtypes) {
  // A Python float is a double, an int an int64 (c10::Scalar's types).
  EXPECT_EQ(Scalar(2.5).dtype(), kFloat64);
  EXPECT_EQ(Scalar(2.5f).dtype(), kFloat64);
  EXPECT_EQ(Scalar(2).dtype(), kInt64);
  EXPECT_EQ(Scalar(uint8_t{7}).dtype(), kInt64);
  EXPECT_EQ(Scalar(true).dtype(), kBool);
  EXPECT_TRUE(Scalar(1.0).is_floating_point());
  EXPECT_TRUE(Scalar(1).is_integral());
  EXPECT_TRUE(Scalar(false).is_bool());
  EXPECT_EQ(Scalar(-2.7).to<int64_t>(), -2);  // truncation toward zero, as a C++ cast
  EXPECT_EQ(Scalar(3).to<double>(), 3.0);
  EXPECT_TRUE(Scalar(0.5).to<bool>());
  EXPECT_FALSE(Scalar(0).to<bool>());
  std::ostringstream os;
  os << Scalar(true) << " " << Scalar(-4) << " " << Scalar(0.5);
  EXPECT_EQ(os.str(), "True -4 0.5");
}

// One line of tests/reference/promote_types.txt, written by PyTorch.
struct TorchPair {
  std::string a, b, promoted;
  bool can_cast = false;
};

std::vector<TorchPair> torch_pairs() {
  std::ifstream in(std::string(EMBER_REFERENCE_DIR) + "/promote_types.txt");
  EXPECT_TRUE(in) << "cannot read tests/reference/promote_types.txt";
  std::vector<TorchPair> pairs;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    TorchPair p;
    int cast = 0;
    fields >> p.a >> p.b >> p.promoted >> cast;
    p.can_cast = cast != 0;
    pairs.push_back(p);
  }
  return pairs;
}

TEST(DType, PromoteTypesAndCanCastMatchTorchForEveryPair) {
  // torch.promote_types and torch.can_cast as PyTorch computes them (the fixture lists PyTorch's
  // real dtypes; pairs with a dtype ember lacks are skipped), and every pair of ember's dtypes
  // must be in the fixture.
  int checked = 0;
  for (const TorchPair& p : torch_pairs()) {
    auto a = dtype_from_name(p.a), b = dtype_from_name(p.b);
    if (!a || !b) continue;
    auto promoted = dtype_from_name(p.promoted);
    ASSERT_TRUE(promoted) << p.a << " + " << p.b << " promotes to " << p.promoted
                          << ", which ember lacks";
    EXPECT_EQ(promote_types(*a, *b), *promoted) << p.a << ", " << p.b;
    EXPECT_EQ(can_cast(*a, *b), p.can_cast) << p.a << " -> " << p.b;
    ++checked;
  }
  EXPECT_EQ(checked, kNumDTypes * kNumDTypes);
  // The examples of torch.promote_types' and torch.can_cast's docs.
  static_assert(promote_types(kInt32, kFloat32) == kFloat32);
  static_assert(promote_types(kUInt8, kInt64) == kInt64);
  static_assert(can_cast(kFloat64, kFloat32) && !can_cast(kFloat32, kInt32));
}

TEST(DType, NamesRoundTrip) {
  for (DType t : kAllDTypes) {
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t) << t;
    EXPECT_EQ(dtype_from_name(std::string("torch.") + dtype_name(t)), t) << t;
  }
  EXPECT_EQ(dtype_from_name("float"), kFloat32);
  EXPECT_EQ(dtype_from_name("double"), kFloat64);
  EXPECT_EQ(dtype_from_name("long"), kInt64);
  EXPECT_EQ(dtype_from_name("int"), kInt32);
  EXPECT_FALSE(dtype_from_name("float128"));
  EXPECT_FALSE(dtype_from_name(""));
}

// The same rules seen through tensors on each device.
class DTypePromotionTest : public testing::DeviceTest {
 protected:
  Tensor dim_tensor(DType t) const { return ones({2}, on(t)); }
  Tensor zero_dim(DType t) const { return ones({}, on(t)); }
};

TEST_P(DTypePromotionTest, DimensionedTensorsPromoteAsPromoteTypes) {
  for (DType a : kAll)
    for (DType b : kAll) {
      EXPECT_EQ(result_type(dim_tensor(a), dim_tensor(b)), promote_types(a, b)) << a << ", " << b;
      EXPECT_EQ((dim_tensor(a) * dim_tensor(b)).dtype(), promote_types(a, b)) << a << ", " << b;
    }
  // Examples from PyTorch's type promotion docs (tensor_attributes.rst).
  EXPECT_EQ((dim_tensor(kInt64) + dim_tensor(kInt32)).dtype(), kInt64);
  EXPECT_EQ((dim_tensor(kBool) + dim_tensor(kInt64)).dtype(), kInt64);
  EXPECT_EQ((dim_tensor(kBool) + dim_tensor(kUInt8)).dtype(), kUInt8);
  EXPECT_EQ((dim_tensor(kFloat32) + dim_tensor(kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((dim_tensor(kBool) + dim_tensor(kInt32)).dtype(), kInt32);
  EXPECT_EQ(add(dim_tensor(kInt64), dim_tensor(kFloat32)).dtype(), kFloat32);
}

TEST_P(DTypePromotionTest, ScalarsDoNotWidenWithinTheirCategory) {
  // torch.result_type(torch.tensor([1, 2], dtype=torch.int), 1.0) is float32 (its docs);
  // tensor_attributes.rst: int_tensor + 5 stays int32.
  EXPECT_EQ(result_type(dim_tensor(kInt32), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(dim_tensor(kInt32), Scalar(5)), kInt32);
  EXPECT_EQ(result_type(dim_tensor(kUInt8), Scalar(5)), kUInt8);
  EXPECT_EQ(result_type(dim_tensor(kUInt8), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(dim_tensor(kInt64), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(dim_tensor(kFloat32), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(dim_tensor(kFloat64), Scalar(2.5)), kFloat64);
  EXPECT_EQ(result_type(dim_tensor(kFloat32), Scalar(7)), kFloat32);
  // bool is the lowest kind, so any number lifts it: torch.tensor([True]) + 1 is int64.
  EXPECT_EQ(result_type(dim_tensor(kBool), Scalar(1)), kInt64);
  EXPECT_EQ(result_type(dim_tensor(kBool), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(dim_tensor(kBool), Scalar(true)), kBool);
  EXPECT_EQ(result_type(dim_tensor(kInt32), Scalar(true)), kInt32);
}

TEST_P(DTypePromotionTest, ZeroDimTensorsOnlyLiftTheKind) {
  // torch.result_type(torch.tensor([1, 2], dtype=torch.uint8), torch.tensor(1)) is uint8 (its
  // docs); int_tensor + long_zerodim is int32 (tensor_attributes.rst); within one category a 0-dim
  // operand never widens a dimensioned one (pytorch/pytorch#58736: float32 + 0-dim float64 is
  // float32, int32 + 0-dim int64 is int32).
  EXPECT_EQ(result_type(dim_tensor(kUInt8), zero_dim(kInt64)), kUInt8);
  EXPECT_EQ(result_type(dim_tensor(kInt32), zero_dim(kInt64)), kInt32);
  EXPECT_EQ(result_type(dim_tensor(kFloat32), zero_dim(kFloat64)), kFloat32);
  // A 0-dim operand of a higher kind wins with its own dtype, not the default one:
  // combine_categories(int32, float64) promotes, giving float64 (TypeProperties.cpp).
  EXPECT_EQ(result_type(dim_tensor(kInt32), zero_dim(kFloat64)), kFloat64);
  EXPECT_EQ(result_type(dim_tensor(kInt64), zero_dim(kFloat32)), kFloat32);
  EXPECT_EQ(result_type(dim_tensor(kBool), zero_dim(kFloat64)), kFloat64);
  EXPECT_EQ(result_type(dim_tensor(kBool), zero_dim(kUInt8)), kUInt8);
  EXPECT_EQ(result_type(dim_tensor(kBool), zero_dim(kInt32)), kInt32);
  // The order of operands does not matter.
  EXPECT_EQ(result_type(zero_dim(kInt64), dim_tensor(kUInt8)), kUInt8);
  EXPECT_EQ(result_type(zero_dim(kFloat64), dim_tensor(kInt32)), kFloat64);
  // A tensor with no elements still has dimensions, so it counts as dimensioned.
  EXPECT_EQ(result_type(zeros({0}, on(kFloat64)), dim_tensor(kFloat32)), kFloat64);
  EXPECT_EQ(result_type(zeros({0}, on(kUInt8)), zero_dim(kInt64)), kUInt8);
}

TEST_P(DTypePromotionTest, ZeroDimTensorsAgainstScalarsAndEachOther) {
  // With no dimensioned operand the 0-dim group is the highest: two 0-dim tensors promote
  // normally, and a Scalar only lifts the kind (a float Scalar as the default dtype).
  EXPECT_EQ(result_type(zero_dim(kInt32), zero_dim(kInt64)), kInt64);
  EXPECT_EQ(result_type(zero_dim(kFloat32), zero_dim(kFloat64)), kFloat64);
  EXPECT_EQ(result_type(zero_dim(kInt32), Scalar(7)), kInt32);
  EXPECT_EQ(result_type(zero_dim(kInt32), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(zero_dim(kInt64), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(zero_dim(kFloat64), Scalar(2.5)), kFloat64);
  EXPECT_EQ(result_type(zero_dim(kBool), Scalar(7)), kInt64);
  Tensor r = zero_dim(kInt32) + 2.5;
  EXPECT_EQ(r.dim(), 0);
  EXPECT_TRUE(tensor_equal(r, tensor(3.5)));
}

TEST_P(DTypePromotionTest, OpsComputeInThePromotedDtype) {
  // int32 tensor + 2.5 is float32 and keeps the fraction.
  EXPECT_TRUE(tensor_equal(tensor({1, 2}, on(kInt32)) + 2.5, tensor({3.5, 4.5})));
  // uint8 + 0-dim int64 stays uint8, so 250 + 10 wraps to 4 as uint8 arithmetic does.
  Tensor u = tensor({250, 3}, on(kUInt8)) + tensor(10, on(kInt64));
  EXPECT_TRUE(tensor_equal(u, tensor({4, 13}, {.dtype = kUInt8})));
  // bool tensor + 1 is int64: True + 1 == 2.
  EXPECT_TRUE(tensor_equal(tensor({true, false}, on()) + 1, tensor({2, 1})));
  // int32 tensor + 0-dim float64 is float64, with the double's precision kept.
  Tensor d = tensor({1, 2}, on(kInt32)) + from_vector<double>({0.1}, Shape{}).to(device());
  EXPECT_TRUE(tensor_equal(d, from_vector<double>({1.1, 2.1})));
  // float32 tensor + 0-dim float64 is float32.
  Tensor f = tensor({1.0, 2.0}, on()) + from_vector<double>({0.1}, Shape{}).to(device());
  EXPECT_TRUE(tensor_equal(f, from_vector<float>({1.1f, 2.1f})));
  // A Scalar operand on the left promotes the same way.
  EXPECT_TRUE(tensor_equal(0.5 * tensor({2, 4}, on(kInt64)), tensor({1.0, 2.0})));
  EXPECT_TRUE(tensor_equal(3 - tensor({1, 2}, on(kUInt8)), tensor({2, 1}, {.dtype = kUInt8})));
  // bool + bool stays bool (logical or), bool * bool is logical and.
  Tensor p = tensor({true, true, false}, on()), q = tensor({true, false, false}, on());
  EXPECT_TRUE(tensor_equal(p + q, tensor({true, true, false})));
  EXPECT_TRUE(tensor_equal(p * q, tensor({true, false, false})));
}

EMBER_INSTANTIATE_DEVICE_TESTS(DTypePromotionTest);

}  // namespace
}  // namespace ember
