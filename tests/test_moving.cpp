// tests/test_moving.cpp: moving tensors between devices and dtypes, copies, host access, and the
// same-device error (the tutorial's "Moving Tensors", "Common GPU Error", "Back to CPU").
#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_equal;
using testing::throws_error;

class MovingTest : public testing::DeviceTest {};

TEST_P(MovingTest, TutorialRoundTrip) {
  Tensor t = tensor({1.0, 2.0, 3.0});
  EXPECT_EQ(t.device(), Device("cpu"));
  Tensor t_dev = t.to(device());
  Device expected = device().is_cuda() ? Device(kCUDA, 0) : Device(kCPU);
  EXPECT_EQ(t_dev.device(), expected);
  EXPECT_EQ(t_dev.is_cuda(), device().is_cuda());
  Tensor back = t_dev.cpu();
  EXPECT_TRUE(back.is_cpu());
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(t_dev.to("cpu").to_vector<double>(), (std::vector<double>{1, 2, 3}));
}

TEST_P(MovingTest, ToSameDeviceAndDtypeReturnsSameTensor) {
  Tensor t = ones({2, 3}, on());
  EXPECT_TRUE(t.to(device()).is_same(t));
  EXPECT_TRUE(t.to(t.device()).is_same(t));
  EXPECT_TRUE(t.to(kFloat32).is_same(t));
  EXPECT_TRUE(t.to(t.device(), kFloat32).is_same(t));
  EXPECT_FALSE(t.to(kFloat32, false, /*copy=*/true).is_same(t));
  EXPECT_NE(t.to(kFloat32, false, true).storage(), t.storage());
  if (device().is_cpu()) {
    EXPECT_TRUE(t.cpu().is_same(t));
  }
}

TEST_P(MovingTest, DtypeConversions) {
  Tensor f = tensor({-1.7, 0.0, 2.5, 300.0}, on());
  EXPECT_TRUE(tensor_equal(f.to(kInt64), tensor({-1, 0, 2, 300}, on())));
  EXPECT_TRUE(tensor_equal(f.to(kBool), tensor({true, false, true, true}, on())));
  EXPECT_TRUE(tensor_equal(f.to(kFloat64), tensor({-1.7f, 0.0f, 2.5f, 300.0f}, on(kFloat64))));
  Tensor b = tensor({true, false}, on());
  EXPECT_TRUE(tensor_equal(b.to(kFloat32), tensor({1.0, 0.0}, on())));
  EXPECT_TRUE(tensor_equal(tensor({255, 7}, on()).to(kUInt8), tensor({255, 7}, on(kUInt8))));
  Tensor both = f.to(Device(kCPU), kInt32);
  EXPECT_TRUE(both.is_cpu());
  EXPECT_EQ(both.dtype(), kInt32);
  EXPECT_EQ(both.to_vector<int32_t>(), (std::vector<int32_t>{-1, 0, 2, 300}));
}

TEST_P(MovingTest, NonContiguousSourcesMoveCorrectly) {
  Tensor host = arange(12).reshape({3, 4});
  Tensor t = host.t().to(device());  // (4, 3), read through strides
  EXPECT_TRUE(tensor_equal(t.cpu(), host.t().contiguous()));
  Tensor sliced = host.slice(1, 0, std::nullopt, 2).to(device(), kFloat64);
  EXPECT_TRUE(tensor_equal(sliced.cpu(),
                           tensor({{0.0, 2.0}, {4.0, 6.0}, {8.0, 10.0}}, {.dtype = kFloat64})));
}

TEST_P(MovingTest, CloneOwnsItsStorage) {
  Tensor t = arange(4, on(kFloat32));
  Tensor c = t.clone();
  EXPECT_NE(c.storage(), t.storage());
  c.fill_(7);
  EXPECT_TRUE(tensor_equal(t, arange(4, on(kFloat32))));
  EXPECT_TRUE(tensor_equal(c, full({4}, 7.0, on())));
}

TEST_P(MovingTest, CopyBroadcastsConvertsAndCrossesDevices) {
  Tensor dst = zeros({2, 3}, on());
  dst.copy_(tensor({1, 2, 3}));  // int64 on the CPU into float32 on the test device
  EXPECT_TRUE(tensor_equal(dst, tensor({{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}}, on())));
  Tensor host = zeros({2, 3}, {.dtype = kFloat64});
  host.copy_(dst, /*non_blocking=*/true);
  EXPECT_TRUE(tensor_equal(host, tensor({{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}}, {.dtype = kFloat64})));
  Tensor col = zeros({3, 2}, on()).t();  // non-contiguous destination
  col.copy_(arange(6).reshape({2, 3}));
  EXPECT_TRUE(tensor_equal(col.contiguous(), tensor({{0.0, 1.0, 2.0}, {3.0, 4.0, 5.0}}, on())));
  EXPECT_TRUE(
      throws_error([&] { dst.copy_(ones({4})); }, ErrorKind::Shape, {"copy_", "[4]", "[2, 3]"}));
}

TEST_P(MovingTest, NonBlockingMovesGiveTheSameValues) {
  Tensor t = arange(1000, {.dtype = kFloat32});
  Tensor d = t.to(device(), /*non_blocking=*/true);
  EXPECT_TRUE(tensor_equal(d.to(Device(kCPU), true), t));
}

TEST_P(MovingTest, ItemCopiesOneValueBack) {
  EXPECT_EQ(tensor({2.5}, on()).item<float>(), 2.5f);
  EXPECT_EQ(tensor(7, on()).item<int64_t>(), 7);
  EXPECT_EQ(tensor({{3}}, on()).item<int>(), 3);
  EXPECT_TRUE(tensor(true, on()).item<bool>());
  EXPECT_EQ(sum(ones({4}, on())).item<double>(), 4.0);
  EXPECT_TRUE(tensor(1.5, on()).item().is_floating_point());
  EXPECT_TRUE(throws_error(
      [&] {
        ones({2, 3}, on()).item<float>();
      },
      ErrorKind::Value, {"a Tensor with 6 elements cannot be converted to Scalar"}));
}

TEST_P(MovingTest, HostAccessNeedsTheCpu) {
  Tensor t = tensor({1.0, 2.0, 3.0}, on());
  if (device().is_cpu()) {
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3}));
    EXPECT_EQ(t.data_ptr<float>()[1], 2.0f);
    EXPECT_TRUE(throws_error([&] { t.data_ptr<double>(); }, ErrorKind::DType,
                             {"data_ptr", "float64", "float32"}));
    return;
  }
  const std::string msg = "can't convert " + t.device().str() +
                          " device type tensor to host memory. Use Tensor.cpu() to copy the "
                          "tensor to host memory first.";
  EXPECT_TRUE(throws_error([&] { t.to_vector<float>(); }, ErrorKind::Device, {msg}));
  EXPECT_TRUE(throws_error([&] { t.data_ptr<float>(); }, ErrorKind::Device, {msg}));
  EXPECT_EQ(t.cpu().to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST_P(MovingTest, MixingDevicesNamesBothDevicesAndTheOp) {
  if (device().is_cpu()) GTEST_SKIP() << "needs a second device";
  Tensor g = ones({3}, on()), c = ones({3});
  const std::string both =
      "Expected all tensors to be on the same device, but found at least two "
      "devices, " +
      g.device().str() + " and cpu!";
  EXPECT_TRUE(throws_error([&] { g + c; }, ErrorKind::Device, {both, "add"}));
  EXPECT_TRUE(throws_error([&] { c* g; }, ErrorKind::Device, {both, "mul"}));
  EXPECT_TRUE(throws_error([&] { g += c; }, ErrorKind::Device, {both, "add_"}));
  EXPECT_TRUE(throws_error([&] { matmul(g, c); }, ErrorKind::Device, {both, "matmul"}));
  EXPECT_TRUE(throws_error([&] { cat({g, c}); }, ErrorKind::Device, {both, "cat"}));
  EXPECT_TRUE(throws_error([&] { where(g > 0, g, c); }, ErrorKind::Device, {both, "where"}));
  EXPECT_TRUE(throws_error([&] { index_select(g, 0, tensor({0})); }, ErrorKind::Device,
                           {both, "index_select"}));
  EXPECT_TRUE(
      throws_error([&] { g.masked_fill_(c > 0, 0); }, ErrorKind::Device, {both, "masked_fill_"}));
  // As in PyTorch, a 0-dim CPU tensor may join a GPU tensor.
  EXPECT_TRUE(tensor_equal((g + tensor(2.0)).cpu(), full({3}, 3.0)));
}

TEST_P(MovingTest, SecondGpuWhenPresent) {
  if (!device().is_cuda() || cuda::device_count() < 2) GTEST_SKIP() << "needs two GPUs";
  Tensor a = arange(5, {.dtype = kFloat32, .device = "cuda:1"});
  EXPECT_EQ(a.device(), Device("cuda:1"));
  Tensor b = a.to("cuda:0");
  EXPECT_EQ(b.device(), Device("cuda:0"));
  EXPECT_TRUE(tensor_equal(b.cpu(), arange(5, {.dtype = kFloat32})));
  EXPECT_TRUE(throws_error([&] { a + b; }, ErrorKind::Device, {"cuda:1", "cuda:0"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(MovingTest);

}  // namespace
}  // namespace ember
