// tests/test_util.h: the device-parametrized fixture and tensor comparisons shared by all tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember::testing {

// Set by the fake-CUDA test main when it stands in for a GPU with CPU code.
inline bool& fake_cuda_backend() {
  static bool fake = false;
  return fake;
}

// Whether tensors can be placed on d in this process.
inline bool device_present(const Device& d) {
  if (d.is_cpu()) return true;
  if (d.is_cuda()) return cuda::device_count() > (d.has_index() ? d.index() : 0);
  return false;
}

// Tests that run once per device; instances for absent devices skip themselves.
class DeviceTest : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (!device_present(GetParam())) GTEST_SKIP() << GetParam() << " is not present";
  }
  Device device() const { return GetParam(); }
  // Options placing a new tensor on this test's device.
  TensorOptions on(std::optional<DType> dtype = std::nullopt) const {
    return TensorOptions{.dtype = dtype, .device = device()};
  }
};

// The whole of a (fixture) file as bytes; empty when it cannot be read.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<double> values_of(const Tensor& t) {
  return t.cpu().to(kFloat64).contiguous().to_vector<double>();
}

// Same shape, dtype and exact values.
inline ::testing::AssertionResult tensor_equal(const Tensor& actual, const Tensor& expected) {
  if (actual.sizes() != expected.sizes())
    return ::testing::AssertionFailure() << "shape " << shape_str(actual.sizes()) << " != expected "
                                         << shape_str(expected.sizes());
  if (actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure()
           << "dtype " << actual.dtype() << " != expected " << expected.dtype();
  auto a = values_of(actual), e = values_of(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    bool both_nan = a[i] != a[i] && e[i] != e[i];
    if (a[i] != e[i] && !both_nan)
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " != expected " << e[i]
             << "\nactual:   " << actual.cpu() << "\nexpected: " << expected.cpu();
  }
  return ::testing::AssertionSuccess();
}

// Same shape and values within atol + rtol * |expected| (dtype not compared).
inline ::testing::AssertionResult tensor_close(const Tensor& actual, const Tensor& expected,
                                               double rtol = 1e-5, double atol = 1e-6) {
  if (actual.sizes() != expected.sizes())
    return ::testing::AssertionFailure() << "shape " << shape_str(actual.sizes()) << " != expected "
                                         << shape_str(expected.sizes());
  auto a = values_of(actual), e = values_of(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    bool both_nan = a[i] != a[i] && e[i] != e[i];
    if (!both_nan && !(std::abs(a[i] - e[i]) <= atol + rtol * std::abs(e[i])))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " vs expected " << e[i]
             << "\nactual:   " << actual.cpu() << "\nexpected: " << expected.cpu();
  }
  return ::testing::AssertionSuccess();
}

// Runs f and checks it throws ember::Error of `kind` whose message contains every `parts`.
template <class F>
::testing::AssertionResult throws_error(F&& f, ErrorKind kind, std::vector<std::string> parts) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() != kind)
      return ::testing::AssertionFailure()
             << "kind " << error_kind_name(e.kind()) << " != expected " << error_kind_name(kind)
             << ": " << e.what();
    for (const auto& p : parts)
      if (std::string(e.what()).find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "message lacks \"" << p << "\": " << e.what();
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-ember exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace ember::testing

#define EMBER_INSTANTIATE_DEVICE_TESTS(Suite)                                                  \
  INSTANTIATE_TEST_SUITE_P(Devices, Suite,                                                     \
                           ::testing::Values(::ember::Device("cpu"), ::ember::Device("cuda")), \
                           [](const ::testing::TestParamInfo<::ember::Device>& info) {         \
                             return std::string(::ember::device_type_name(info.param.type())); \
                           })
