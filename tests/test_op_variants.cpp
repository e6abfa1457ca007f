// tests/test_op_variants.cpp: every method, in-place and Scalar form listed in
// ember/op_variants.def gives the values of its free function. The list itself drives the test:
// each form becomes a lambda over the op's parameters, called with sample arguments chosen by
// parameter type (and, for index and mask tensors, by op).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "test_util.h"

namespace ember::testing {
namespace {

class OpVariantsTest : public DeviceTest {};

// Sample arguments for one call of an op, in parameter order (self first).
class Samples {
 public:
  Samples(std::string_view op, Device device) : op_(op), device_(device) {}

  template <class T>
  T next() {
    const int pos = pos_++;
    if constexpr (std::is_same_v<T, Tensor>) {
      return tensor_at(pos);
    } else if constexpr (std::is_same_v<T, Scalar>) {
      if (op_.starts_with("bitwise_")) return int64_t{3};
      return 1.5;
    } else if constexpr (std::is_same_v<T, std::optional<Scalar>>) {
      return Scalar(0.5 * pos);  // clamp(min 0.5, max 1.0)
    } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, std::optional<int64_t>>) {
      if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
        if (op_.starts_with("unique")) return std::nullopt;               // over all elements
        if (op_ == "repeat_interleave" && pos == 3) return std::nullopt;  // output_size: summed
      }
      if (op_ == "diagonal") return T(pos == 1 ? 1 : pos - 2);  // offset 1 of dims 0 and 1
      return T(1);
    } else if constexpr (std::is_same_v<T, bool>) {
      return true;
    } else if constexpr (std::is_same_v<T, Shape>) {
      if (op_ == "repeat") return Shape{2, 1};
      if (op_ == "unflatten") return Shape{3, 1};
      return Shape{1};
    } else if constexpr (std::is_same_v<T, std::optional<DType>>) {
      return kFloat64;
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (op_ == "scatter") return "add";
      if (op_ == "scatter_reduce") return "amax";
      return "tanh";
    } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::optional<double>>) {
      return T(0.2);
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      return {1, 2};
    } else {
      static_assert(!sizeof(T), "no sample for this parameter type: add one");
    }
  }

 private:
  Tensor tensor_at(int pos) const {
    TensorOptions on{.device = device_};
    const bool along_index = op_ == "index_add" || op_ == "index_copy" || op_ == "index_fill";
    if (along_index && pos == 2) return tensor({2, 0}, on).to(kInt64);
    if (along_index && pos == 3) return tensor({{1, 2}, {3, 4}, {5, 6}}, on).to(kFloat32);
    const bool indexing = op_ == "index_select" || op_ == "gather" || op_ == "scatter_add" ||
                          op_ == "scatter" || op_ == "scatter_reduce";
    if ((indexing && pos == 2) || (op_ == "take_along_dim" && pos == 1)) {
      if (op_ == "index_select") return tensor({2, 0}, on).to(kInt64);
      return tensor({{0, 2, 1}, {1, 0, 2}, {2, 1, 0}}, on).to(kInt64);
    }
    if (op_ == "repeat_interleave" && pos == 1) return tensor({2, 0, 1}, on).to(kInt64);
    if (op_ == "bincount")
      return pos == 0 ? tensor({0, 2, 2}, on).to(kInt64) : tensor({0.5, 1.0, 2.0}, on);
    if ((op_ == "masked_fill" || op_ == "masked_select" || op_ == "masked_scatter") && pos == 1)
      return tensor({{1, 0, 0}, {0, 1, 0}, {1, 1, 0}}, on).to(kBool);
    // 2-D operands (mm), 3-D for bmm; values positive (log, sqrt), self and other ascending and
    // descending, so they meet in the middle element (comparisons).
    // Vectors for dot, vdot and outer (and mv's second operand), batches for the batched
    // products (addbmm's self is a matrix).
    const bool vector =
        op_ == "dot" || op_ == "vdot" || op_ == "outer" || (op_ == "mv" && pos == 1);
    const bool batched = op_ == "bmm" || op_ == "baddbmm" || (op_ == "addbmm" && pos > 0);
    const int64_t n = batched ? 18 : 9;
    Tensor t = arange(1, n + 1, 1, on).to(kFloat32).reshape(batched ? Shape{2, 3, 3} : Shape{3, 3});
    // Bitwise ops take integers.
    if (op_.starts_with("bitwise_")) return (pos == 0 ? t : (n + 1 - t) / 4).to(kInt64);
    if (vector) t = t.reshape({-1}).narrow(0, 0, 3);
    return pos == 0 ? t * 0.25 : (n + 1 - t) * 0.25;
  }

  std::string_view op_;
  Device device_;
  int pos_ = 0;
};

::testing::AssertionResult same(const Tensor& a, const Tensor& b) {
  return tensor_equal(a, b);
}
::testing::AssertionResult same(const detail::TensorPair& a, const detail::TensorPair& b) {
  if (auto r = tensor_equal(std::get<0>(a), std::get<0>(b)); !r) return r;
  return tensor_equal(std::get<1>(a), std::get<1>(b));
}
::testing::AssertionResult same(const detail::TensorTriple& a, const detail::TensorTriple& b) {
  if (auto r = tensor_equal(std::get<0>(a), std::get<0>(b)); !r) return r;
  if (auto r = tensor_equal(std::get<1>(a), std::get<1>(b)); !r) return r;
  return tensor_equal(std::get<2>(a), std::get<2>(b));
}
::testing::AssertionResult same(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << a.size() << " pieces != expected " << b.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (auto r = tensor_equal(a[i], b[i]); !r) return r << " (piece " << i << ")";
  return ::testing::AssertionSuccess();
}

// Calls form(samples...) -- which returns (the form's result, the function's result) -- with one
// sample per parameter of the lambda.
template <class F, class R, class... A>
void check(std::string_view op, Device device, F form, R (F::*)(A...) const) {
  Samples samples(op, device);
  std::tuple<std::decay_t<A>...> args{samples.template next<std::decay_t<A>>()...};
  auto [got, want] = std::apply(form, args);
  EXPECT_TRUE(same(got, want));
}
template <class F>
void check(std::string_view op, std::string_view form_name, Device device, F form, int& count) {
  SCOPED_TRACE(std::string(op) + " (" + std::string(form_name) + ")");
  check(op, device, form, &F::operator());
  ++count;
}

// In place: the same tensor comes back, holding the function's values.
template <class R>
std::pair<Tensor, R> inplace_result(Tensor& t, Tensor& returned, R want) {
  EXPECT_TRUE(returned.is_same(t));
  return {t, std::move(want)};
}

TEST_P(OpVariantsTest, EveryFormMatchesItsFunction) {
  const Device dev = device();
  int count = 0;
#define EMBER_OP_METHOD(ret, name, params, args)                      \
  check(                                                              \
      #name, "method", dev,                                           \
      [](const Tensor& self EMBER_OP_AFTER_SELF params) {             \
        return std::pair{self.name(EMBER_OP_PARAMS args),             \
                         ember::name(self EMBER_OP_AFTER_SELF args)}; \
      },                                                              \
      count);
#define EMBER_OP_INPLACE(ret, name, params, args)                          \
  check(                                                                   \
      #name, "inplace", dev,                                               \
      [](const Tensor& self EMBER_OP_AFTER_SELF params) {                  \
        Tensor t = self.clone();                                           \
        return inplace_result(t, t.name##_(EMBER_OP_PARAMS args),          \
                              ember::name(self EMBER_OP_AFTER_SELF args)); \
      },                                                                   \
      count);
#define EMBER_OP_SCALAR(ret, name, params, args)                      \
  check(                                                              \
      #name, "scalar", dev,                                           \
      [](const Tensor& self, const Scalar& other) {                   \
        return std::pair{self.name(other), ember::name(self, other)}; \
      },                                                              \
      count);
#define EMBER_OP_SCALAR_INPLACE(ret, name, params, args)                      \
  check(                                                                      \
      #name, "scalar_inplace", dev,                                           \
      [](const Tensor& self, const Scalar& other) {                           \
        Tensor t = self.clone();                                              \
        return inplace_result(t, t.name##_(other), ember::name(self, other)); \
      },                                                                      \
      count);
#include "ember/op_variants.def"
  EXPECT_GE(count, 80);  // the list's 82 forms at the time of writing
}

// The defaults of the generated declarations are PyTorch's.
TEST_P(OpVariantsTest, DefaultArguments) {
  Tensor x = arange(-3, 3, 1, on()).to(kFloat32).reshape({2, 3});
  EXPECT_TRUE(tensor_equal(x.add(x), x.add(x, 1)));
  EXPECT_TRUE(tensor_equal(x.gelu(), x.gelu("none")));
  EXPECT_TRUE(tensor_equal(leaky_relu(x), leaky_relu(x, 0.01)));
  EXPECT_TRUE(tensor_equal(x.var(), var(x, {}, true, false)));
  EXPECT_TRUE(tensor_equal(x.argmax(), argmax(x, std::nullopt, false)));
  EXPECT_EQ(x.split(1).size(), 2u);
  EXPECT_TRUE(tensor_equal(x.clamp(0), clamp(x, 0, std::nullopt)));
}

// The methods the list added, against values worked out by hand.
TEST_P(OpVariantsTest, AddedMethods) {
  Tensor x = tensor({-2.0, 0.0, 3.0}, on());
  EXPECT_TRUE(tensor_equal(x.sign(), tensor({-1.0, 0.0, 1.0}, on())));
  EXPECT_TRUE(tensor_close(x.abs().log1p(), tensor({std::log1p(2.0), 0.0, std::log1p(3.0)}, on())));
  Tensor a = tensor({1, 0, 1}, on()).to(kBool), b = tensor({1, 1, 0}, on()).to(kBool);
  EXPECT_TRUE(tensor_equal(a.logical_xor(b), tensor({0, 1, 1}, on()).to(kBool)));
  EXPECT_TRUE(tensor_equal(x.eq(0), tensor({0, 1, 0}, on()).to(kBool)));
  EXPECT_TRUE(tensor_equal(x.gt(-2), x > -2));
  EXPECT_TRUE(tensor_equal(ember::add(x, 1), x + 1));
}

EMBER_INSTANTIATE_DEVICE_TESTS(OpVariantsTest);

}  // namespace
}  // namespace ember::testing
