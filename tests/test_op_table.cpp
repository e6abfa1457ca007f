// tests/test_op_table.cpp: every row of the op table (tests/op_table) on every device and dtype it
// supports -- values against the row's reference on seeded inputs of its samples (0-dim, empty,
// broadcast), the result dtype, non-contiguous inputs against contiguous ones, and the device
// against the CPU; gradcheck in float64 for differentiable rows; and that every op of the .def
// files and of op_variants.def has a row.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "op_table/op_table.h"
#include "test_util.h"

namespace ember::op_table {
namespace {

struct Case {
  const OpRow* row;
  DType dtype;
  Device device;
};

// gtest prints a parameter with this (instead of its bytes) when a test fails.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.row->id() << " " << c.dtype << " " << c.device;
}

std::string device_name(const Device& d) {
  return device_type_name(d.type());
}

std::vector<Case> value_cases() {
  std::vector<Case> out;
  for (const OpRow& row : rows())
    for (DType dtype : row.dtypes)
      for (const char* device : {"cpu", "cuda:0"}) out.push_back({&row, dtype, Device(device)});
  return out;
}

std::vector<Case> grad_cases() {
  std::vector<Case> out;
  for (const OpRow& row : rows())
    if (row.differentiable)
      for (const char* device : {"cpu", "cuda:0"}) out.push_back({&row, kFloat64, Device(device)});
  return out;
}

::testing::AssertionResult same(const Tensor& actual, const Tensor& expected, DType dtype) {
  if (auto m = mismatch(actual, expected, dtype)) return ::testing::AssertionFailure() << *m;
  return ::testing::AssertionSuccess();
}

class OpTableTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!testing::device_present(GetParam().device))
      GTEST_SKIP() << GetParam().device << " is not present";
  }
};

TEST_P(OpTableTest, Values) {
  const auto& [row, dtype, device] = GetParam();
  const DType want = result_dtype(*row, dtype);
  // A row whose reference is ember itself in float64 has nothing to compare its float64 values
  // with; its other checks still run.
  const bool compare_values = !(row->self_reference() && dtype == kFloat64);
  int layouts = 0;
  for (size_t s = 0; s < row->samples.size(); ++s) {
    SCOPED_TRACE("sample " + std::to_string(s) + ": " + shapes_str(row->samples[s]));
    const std::vector<Tensor> cpu = make_inputs(*row, s, dtype);
    const std::vector<Tensor> on_device = to_device(*row, cpu, device);
    const Tensor got = row->call(on_device, row->args);
    EXPECT_EQ(got.dtype(), want);
    EXPECT_EQ(got.device(), device);
    if (compare_values) {
      EXPECT_TRUE(same(got, reference(*row, cpu, want), want));
    }
    if (!device.is_cpu()) {
      EXPECT_TRUE(same(got, row->call(cpu, row->args), want)) << "vs the CPU";
    }
    for (bool transposed : {true, false}) {
      const std::vector<Tensor> strided = non_contiguous(on_device, transposed);
      if (std::none_of(strided.begin(), strided.end(),
                       [](const Tensor& t) { return !t.is_contiguous(); }))
        continue;
      ++layouts;
      EXPECT_TRUE(same(row->call(strided, row->args), got, want))
          << (transposed ? "transposed" : "element stride 2") << " inputs";
    }
  }
  EXPECT_GT(layouts, 0) << "no sample has an input that can be made non-contiguous";
}

INSTANTIATE_TEST_SUITE_P(OpTable, OpTableTest, ::testing::ValuesIn(value_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.row->id() + "_" + dtype_name(info.param.dtype) + "_" +
                                  device_name(info.param.device);
                         });

class OpTableGradTest : public OpTableTest {};

// gradcheck in float64 on every sample with 1 to 200 elements per input.
TEST_P(OpTableGradTest, Gradcheck) {
  const auto& [row, dtype, device] = GetParam();
  int checked = 0;
  for (size_t s = 0; s < row->samples.size(); ++s) {
    const auto& shapes = row->samples[s];
    if (std::any_of(shapes.begin(), shapes.end(), [](const Shape& sh) {
          int64_t n = 1;
          for (int64_t d : sh) n *= d;
          return n == 0 || n > 200;
        }))
      continue;
    SCOPED_TRACE("sample " + std::to_string(s) + ": " + shapes_str(shapes));
    const std::vector<Tensor> inputs = to_device(*row, make_inputs(*row, s, dtype), device, true);
    try {
      EXPECT_TRUE(autograd::gradcheck(
          [&](const std::vector<Tensor>& x) { return row->call(x, row->args); }, inputs));
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no sample small enough for gradcheck";
}

INSTANTIATE_TEST_SUITE_P(OpTable, OpTableGradTest, ::testing::ValuesIn(grad_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.row->id() + "_" + device_name(info.param.device);
                         });

// --- the table itself

bool has_row(const std::string& name, size_t arity) {
  for (const OpRow& row : rows()) {
    if (row.name == name && row.arity() == arity) return true;
    const auto& c = row.also_covers;
    if (row.differentiable && std::find(c.begin(), c.end(), name) != c.end()) return true;
  }
  return false;
}

TEST(OpTableCoverage, EveryDefOpHasARow) {
  for (const std::string& name : unary_def_names())
    EXPECT_TRUE(has_row(name, 1)) << "unary_ops.def's " << name << " has no row in the op table";
  for (const std::string& name : binary_def_names())
    EXPECT_TRUE(has_row(name, 2)) << "binary_ops.def's " << name << " has no row in the op table";
  EXPECT_GE(unary_def_names().size(), 16u);
  EXPECT_GE(binary_def_names().size(), 19u);
}

// The functions of op_variants.def have rows too, except the multi-output views, which
// test_multi_output.cpp covers.
TEST(OpTableCoverage, EveryOpVariantsFunctionHasARow) {
  const std::set<std::string> views = {"split", "split_with_sizes", "chunk", "unbind"};
  std::vector<std::string> names;
#define EMBER_OP_FUNCTION(ret, name, params, args) names.push_back(#name);
#include "ember/op_variants.def"
  ASSERT_GE(names.size(), 50u);
  for (const std::string& name : names) {
    if (views.count(name)) continue;
    const bool found = std::any_of(rows().begin(), rows().end(),
                                   [&](const OpRow& row) { return row.name == name; });
    EXPECT_TRUE(found) << "op_variants.def's " << name << " has no row in the op table";
  }
}

TEST(OpTableCoverage, RowsAreWellFormed) {
  std::set<std::string> ids;
  for (const OpRow& row : rows()) {
    SCOPED_TRACE(row.id());
    EXPECT_TRUE(ids.insert(row.id()).second) << "two rows are called " << row.id();
    EXPECT_TRUE(row.call);
    EXPECT_FALSE(row.dtypes.empty());
    EXPECT_FALSE(row.samples.empty());
    for (const auto& s : row.samples) EXPECT_EQ(s.size(), row.arity());
    if (row.along_dim) {
      EXPECT_FALSE(row.args.numbers.empty());
    }
    // Element-wise binary rows broadcast a column with a row.
    if (row.elementwise && row.binary_ref) {
      EXPECT_TRUE(std::any_of(row.samples.begin(), row.samples.end(), [](const auto& s) {
        return s[0] == Shape{3, 1} && s[1] == Shape{1, 4};
      }));
    }
  }
  EXPECT_GE(rows().size(), 80u);
}

TEST(OpTableCoverage, TolerancesByDtype) {
  EXPECT_EQ(tolerance(kFloat32).rtol, 1.3e-6);
  EXPECT_EQ(tolerance(kFloat32).atol, 1e-5);
  EXPECT_EQ(tolerance(kFloat64).rtol, 1e-7);
  EXPECT_EQ(tolerance(kInt64).rtol, 0);
  EXPECT_EQ(tolerance(kBool).atol, 0);
}

// The comparison the Values test makes fails on a wrong value, shape or NaN.
TEST(OpTableCoverage, MismatchCatchesDifferences) {
  Tensor x = tensor({1.0, 2.0, 3.0});
  EXPECT_FALSE(mismatch(x, x.to(kFloat64), kFloat32).has_value());
  EXPECT_TRUE(mismatch(x + 1e-4, x, kFloat32).has_value());
  EXPECT_TRUE(mismatch(x.reshape({3, 1}), x, kFloat32).has_value());
  EXPECT_TRUE(mismatch(tensor({1.0, std::nan(""), 3.0}), x, kFloat32).has_value());
  EXPECT_TRUE(mismatch(tensor({1, 2, 4}), tensor({1, 2, 3}), kInt64).has_value());
}

}  // namespace
}  // namespace ember::op_table
