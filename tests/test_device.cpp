// tests/test_device.cpp: Device parsing and printing, availability queries, and placing tensors
// on devices that are not there (the tutorial's "Checking GPU Availability", "Setting the Device").
#include <unordered_set>

#include "test_util.h"

namespace ember {
namespace {

using testing::throws_error;

TEST(Device, ParsesPyTorchStrings) {
  EXPECT_EQ(Device("cpu"), Device(kCPU));
  EXPECT_EQ(Device("cuda"), Device(kCUDA));
  EXPECT_EQ(Device("cuda").index(), -1);
  EXPECT_EQ(Device("cuda:1"), Device(kCUDA, 1));
  EXPECT_EQ(Device("cuda:12").index(), 12);
  EXPECT_EQ(Device("mps").type(), kMPS);
  EXPECT_EQ(Device("cpu:0").index(), 0);
  EXPECT_TRUE(Device("cuda:0").is_cuda());
  EXPECT_TRUE(Device("cpu").is_cpu());
}

TEST(Device, PrintsAsPyTorch) {
  EXPECT_EQ(Device("cpu").str(), "cpu");
  EXPECT_EQ(Device("cuda").str(), "cuda");
  EXPECT_EQ(Device(kCUDA, 0).str(), "cuda:0");
  EXPECT_EQ(Device("cuda:1").str(), "cuda:1");
  EXPECT_EQ(Device("mps").str(), "mps");
  std::ostringstream os;
  os << Device("cuda:3");
  EXPECT_EQ(os.str(), "cuda:3");
}

TEST(Device, EqualityAndHashing) {
  EXPECT_NE(Device("cuda:0"), Device("cuda:1"));
  EXPECT_NE(Device("cuda"), Device("cuda:0"));  // unspecified index is its own value, as in PyTorch
  EXPECT_NE(Device("cpu"), Device("cuda:0"));
  std::unordered_set<Device> set{Device("cpu"), Device("cuda:0"), Device("cuda:1"), Device("cpu")};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(set.count(Device(kCUDA, 1)));
}

TEST(Device, MalformedStringsListWhatIsAccepted) {
  for (const char* bad : {"gpu", "cuda:-1", "cuda:x", "", "cuda:0:1", "CUDA", "cuda:", " cpu",
                          "cpu:1", "cuda:+1", "cuda:1x"}) {
    EXPECT_TRUE(throws_error([&] { Device d(bad); }, ErrorKind::Device,
                             {"invalid device string", "'cpu'", "'cuda'", "'cuda:N'", "'mps'"}))
        << "spec: '" << bad << "'";
  }
  EXPECT_TRUE(throws_error([] { Device d(kCUDA, -2); }, ErrorKind::Device, {">= 0"}));
}

TEST(Availability, AnswersWithoutCrashing) {
  int n = cuda::device_count();
  EXPECT_GE(n, 0);
  EXPECT_EQ(cuda::is_available(), n > 0);
  EXPECT_FALSE(mps::is_available());
  for (int i = 0; i < n; ++i) EXPECT_FALSE(cuda::get_device_name(i).empty());
  EXPECT_TRUE(throws_error([&] { cuda::get_device_name(n); }, ErrorKind::Device,
                           {"no CUDA device", std::to_string(n) + " present"}));
}

TEST(Availability, BestDeviceIsCudaWhenAvailableElseCpu) {
  Device d = best_device();
  EXPECT_EQ(d, cuda::is_available() ? Device("cuda:0") : Device("cpu"));
  // The tutorial's pattern, spelled out, agrees with the one call.
  Device pattern(cuda::is_available() ? "cuda" : "cpu");
  EXPECT_EQ(tensor({1.0}).to(pattern).device(), d);
}

TEST(Availability, MissingDevicesAreNamedWithWhatExists) {
  int n = cuda::device_count();
  if (n == 0) {
    EXPECT_TRUE(throws_error([] { tensor({1.0}).to("cuda"); }, ErrorKind::Device,
                             {"cuda", "not available", "Available devices: cpu"}));
    EXPECT_TRUE(throws_error([] { zeros({2}, {.device = "cuda:0"}); }, ErrorKind::Device,
                             {"cuda:0", "not available"}));
  }
  EXPECT_TRUE(throws_error([&] { tensor({1.0}).to(Device(kCUDA, n + 2)); }, ErrorKind::Device,
                           {"cuda:" + std::to_string(n + 2), "not available", "cpu"}));
  EXPECT_TRUE(throws_error([] { tensor({1.0}).to("mps"); }, ErrorKind::Device,
                           {"mps", "not available", "Available devices: cpu"}));
  EXPECT_TRUE(throws_error([] { ones({1}, {.device = "mps"}); }, ErrorKind::Device, {"mps"}));
}

TEST(Availability, DeviceIndexDefaultsToCurrent) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(tensor({1.0}).to("cuda").device(), Device("cuda:0"));
  EXPECT_EQ(tensor({1.0}).cuda().device(), Device("cuda:0"));
}

}  // namespace
}  // namespace ember
