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
    for (const char* device : {"cpu", "cuda:0"}) {
      const Device d(device);
      for (DType dtype : dtypes_on(row, d.type())) out.push_back({&row, dtype, d});
    }
  return out;
}

std::vector<Case> grad_cases() {
  std::vector<Case> out;
  for (const OpRow& row : rows())
    if (row.differentiable)
      for (const char* device : {"cpu", "cuda:0"}) out.push_back({&row, kFloat64, Device(device)});
  return out;
}

class OpTableTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const auto& [row, dtype, device] = GetParam();
    if (!testing::device_present(device)) GTEST_SKIP() << device << " is not present";
    decision_ = decide(*row, dtype, device.type());
    if (decision_.verdict == Verdict::Skip) GTEST_SKIP() << decision_.reason;
  }
  // A row expected to fail here must fail, and says so when it passes (then its entry goes).
  void expect_outcome(const std::vector<std::string>& failures) const {
    if (decision_.verdict == Verdict::ExpectFailure) {
      EXPECT_FALSE(failures.empty()) << "expected to fail (" << decision_.reason
                                     << ") but passed: remove the row's device exception";
      return;
    }
    for (const std::string& f : failures) ADD_FAILURE() << f;
  }
  Decision decision_;
};

TEST_P(OpTableTest, Values) {
  const auto& [row, dtype, device] = GetParam();
  int layouts = 0;
  expect_outcome(run_values(*row, dtype, device, {}, &layouts));
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
  std::vector<std::string> failures;
  for (size_t s = 0; s < row->samples.size(); ++s) {
    const auto& shapes = row->samples[s];
    if (std::any_of(shapes.begin(), shapes.end(), [](const Shape& sh) {
          int64_t n = 1;
          for (int64_t d : sh) n *= d;
          return n == 0 || n > 200;
        }))
      continue;
    const std::vector<Tensor> inputs = to_device(*row, make_inputs(*row, s, dtype), device, true);
    try {
      if (!autograd::gradcheck(
              [&](const std::vector<Tensor>& x) { return row->call(x, row->args); }, inputs))
        failures.push_back("sample " + std::to_string(s) + " (" + shapes_str(shapes) +
                           "): gradcheck failed");
    } catch (const std::exception& e) {
      failures.push_back("sample " + std::to_string(s) + " (" + shapes_str(shapes) +
                         "): threw: " + e.what());
    }
    ++checked;
  }
  expect_outcome(failures);
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

// A row's device rule: its dtypes, skips, expected failures and tolerances there, and the runner
// judging by them -- an op off by 1e-3 fails at float32's tolerance and passes at a rule's 1e-2.
TEST(OpTableCoverage, DeviceRulesDecideAndTolerate) {
  const OpRow* add = nullptr;
  for (const OpRow& r : rows())
    if (r.id() == "add") add = &r;
  ASSERT_NE(add, nullptr);
  OpRow row = *add;
  row.call = [](const std::vector<Tensor>& x, const OpArgs&) { return x[0] + x[1] + 1e-3; };
  EXPECT_FALSE(run_values(row, kFloat32, Device("cpu")).empty());
  row.device_rules.push_back(
      DeviceRule{.device = kCPU,
                 .dtypes = std::vector<DType>{kFloat32, kInt64},
                 .exceptions = {{kInt64, false, "no int64 kernel"}, {kBool, true, "wrong on bool"}},
                 .tolerances = {{kFloat32, {0, 1e-2}}}});
  EXPECT_EQ(dtypes_on(row, kCPU), (std::vector<DType>{kFloat32, kInt64}));
  EXPECT_EQ(dtypes_on(row, kCUDA), row.dtypes);
  EXPECT_EQ(decide(row, kInt64, kCPU).verdict, Verdict::Skip);
  EXPECT_EQ(decide(row, kInt64, kCPU).reason, "no int64 kernel");
  EXPECT_EQ(decide(row, kBool, kCPU).verdict, Verdict::ExpectFailure);
  EXPECT_EQ(decide(row, kFloat32, kCPU).verdict, Verdict::Run);
  EXPECT_EQ(decide(row, kInt64, kCUDA).verdict, Verdict::Run);
  EXPECT_EQ(tolerance(row, kFloat32, kCPU).atol, 1e-2);
  EXPECT_EQ(tolerance(row, kFloat32, kCUDA).atol, tolerance(kFloat32).atol);
  EXPECT_TRUE(run_values(row, kFloat32, Device("cpu")).empty());
}

}  // namespace
}  // namespace ember::op_table
