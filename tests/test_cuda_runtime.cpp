// tests/test_cuda_runtime.cpp: the CUDA runtime API (devices, streams, events, memory statistics,
// out-of-memory recovery, pinned memory and asynchronous copies). Without a real GPU it checks
// the answers and errors of a build without CUDA or a machine without a driver; the GPU cases
// run only where a GPU is present.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::throws_error;

bool real_gpu() {
  return cuda::is_built() && cuda::is_available() && !testing::fake_cuda_backend();
}

TEST(CudaRuntime, AnswersWithoutAGpu) {
  if (real_gpu()) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(cuda::memory_allocated(), 0u);
  EXPECT_EQ(cuda::memory_reserved(), 0u);
  EXPECT_EQ(cuda::max_memory_allocated(), 0u);
  cuda::reset_peak_memory_stats();
  cuda::empty_cache();
  const char* why = cuda::is_built() ? "no CUDA device" : "ember was built without CUDA";
  EXPECT_TRUE(throws_error([] { cuda::get_device_properties(0); }, ErrorKind::Device, {why}));
  EXPECT_TRUE(throws_error([] { cuda::synchronize(); }, ErrorKind::Device, {why}));
  EXPECT_TRUE(throws_error([] { cuda::set_device(0); }, ErrorKind::Device, {why}));
  EXPECT_TRUE(throws_error([] { cuda::Stream::create(); }, ErrorKind::Device, {why}));
  EXPECT_TRUE(throws_error([] { cuda::DeviceGuard g(0); }, ErrorKind::Device, {why}));
  cuda::DeviceGuard none(-1);  // index -1 means "leave the device alone" everywhere
}

TEST(CudaRuntime, PinMemoryNeedsAGpu) {
  if (real_gpu()) GTEST_SKIP() << "a GPU is present";
  Tensor t = ones({3});
  EXPECT_FALSE(t.is_pinned());
  EXPECT_TRUE(throws_error([&] { t.pin_memory(); }, ErrorKind::Device, {"pin_memory"}));
}

TEST(CudaRuntime, DeviceProperties) {
  if (!real_gpu()) GTEST_SKIP() << "no GPU";
  cuda::DeviceProperties p = cuda::get_device_properties(0);
  EXPECT_FALSE(p.name.empty());
  EXPECT_EQ(p.name, cuda::get_device_name(0));
  EXPECT_GT(p.total_memory, size_t{1} << 30);
  EXPECT_GE(p.major, 7);
  EXPECT_GT(p.multi_processor_count, 0);
  EXPECT_EQ(cuda::current_device(), 0);
  {
    cuda::DeviceGuard g(cuda::device_count() - 1);
    EXPECT_EQ(cuda::current_device(), cuda::device_count() - 1);
  }
  EXPECT_EQ(cuda::current_device(), 0);
}

TEST(CudaRuntime, StreamsAndEvents) {
  if (!real_gpu()) GTEST_SKIP() << "no GPU";
  cuda::Stream s = cuda::Stream::create();
  EXPECT_NE(s.handle(), nullptr);
  EXPECT_EQ(cuda::Stream::current(), cuda::Stream::default_stream());
  cuda::Event start(true), end(true);
  Tensor x;
  {
    cuda::StreamGuard guard(s);
    EXPECT_EQ(cuda::Stream::current(), s);
    start.record();
    x = ones({1024, 1024}, TensorOptions{.device = Device("cuda")});
    x = matmul(x, x);
    end.record();
  }
  EXPECT_EQ(cuda::Stream::current(), cuda::Stream::default_stream());
  end.wait(cuda::Stream::current());
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_TRUE(s.query());
  EXPECT_GE(start.elapsed_time(end), 0.0f);
  EXPECT_EQ(x.index({0, 0}).item<float>(), 1024.0f);
  cuda::Event untimed;
  untimed.record(s);
  EXPECT_TRUE(
      throws_error([&] { untimed.elapsed_time(end); }, ErrorKind::Value, {"enable_timing"}));
}

TEST(CudaRuntime, CachingAllocatorStatistics) {
  if (!real_gpu()) GTEST_SKIP() << "no GPU";
  cuda::synchronize();
  size_t before = cuda::memory_allocated();
  cuda::reset_peak_memory_stats();
  {
    Tensor t = empty({1 << 20}, TensorOptions{.device = Device("cuda")});  // 4 MiB
    EXPECT_EQ(cuda::memory_allocated(), before + (size_t{4} << 20));
    EXPECT_GE(cuda::memory_reserved(), cuda::memory_allocated());
  }
  EXPECT_EQ(cuda::memory_allocated(), before);
  EXPECT_EQ(cuda::max_memory_allocated(), before + (size_t{4} << 20));
  size_t reserved = cuda::memory_reserved();
  Tensor again = empty({1 << 20}, TensorOptions{.device = Device("cuda")});
  EXPECT_EQ(cuda::memory_reserved(), reserved);  // served from the cache
  again = Tensor();
  cuda::empty_cache();
  EXPECT_LE(cuda::memory_reserved(), reserved);
}

TEST(CudaRuntime, OutOfMemoryIsRecoverable) {
  if (!real_gpu()) GTEST_SKIP() << "no GPU";
  size_t total = cuda::get_device_properties(0).total_memory;
  EXPECT_TRUE(throws_error(
      [&] { empty({static_cast<int64_t>(total)}, TensorOptions{.device = Device("cuda")}); },
      ErrorKind::OutOfMemory, {"CUDA out of memory. Tried to allocate", "total capacity"}));
  Tensor small = ones({16}, TensorOptions{.device = Device("cuda")});
  EXPECT_EQ(small.sum().item<float>(), 16.0f);
}

TEST(CudaRuntime, PinnedMemoryAndAsyncCopies) {
  if (!real_gpu()) GTEST_SKIP() << "no GPU";
  Tensor host = arange(0, 100000, 1, TensorOptions{.dtype = kFloat32});
  Tensor pinned = host.pin_memory();
  EXPECT_TRUE(pinned.is_pinned());
  EXPECT_FALSE(host.is_pinned());
  EXPECT_TRUE(testing::tensor_equal(pinned, host));
  Tensor dev = pinned.to(Device("cuda"), /*non_blocking=*/true);
  pinned = Tensor();  // the pinned block must outlive the copy without the tensor
  Tensor refill = zeros({100000}).pin_memory();  // may get the same block once the copy is done
  EXPECT_TRUE(testing::tensor_equal(dev.cpu(), host));
  Tensor back = zeros({100000}).pin_memory();
  back.copy_(dev, /*non_blocking=*/true);
  cuda::synchronize();
  EXPECT_TRUE(testing::tensor_equal(back, host));
  Tensor pageable = host.to(Device("cuda"), /*non_blocking=*/true);  // synchronous, still right
  EXPECT_TRUE(testing::tensor_equal(pageable.cpu(), host));
}

TEST(CudaRuntime, CopiesBetweenGpus) {
  if (!real_gpu() || cuda::device_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  Tensor a = arange(0, 1000, 1, TensorOptions{.device = Device("cuda:0")});
  Tensor b = a.to(Device("cuda:1"));
  EXPECT_EQ(b.device(), Device("cuda:1"));
  Tensor c = b * 2;
  EXPECT_TRUE(testing::tensor_equal(c.cpu(), a.cpu() * 2));
}

}  // namespace
}  // namespace ember
