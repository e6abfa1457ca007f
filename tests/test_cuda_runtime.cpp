// tests/test_cuda_runtime.cpp: the CUDA runtime API (devices, streams, events, memory statistics,
// out-of-memory recovery, pinned memory and asynchronous copies, record_stream, copies between
// GPUs). Without a real GPU it checks
// the answers and errors of a build without CUDA or a machine without a driver; the GPU cases
// run only where a GPU is present.
#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/pinned_memory.h"
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
  EXPECT_TRUE(throws_error([] { cuda::Graph g; }, ErrorKind::Device, {"cuda::Graph"}));
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

TEST(CudaRuntime, EmptyCacheGivesPinnedBlocksBack) {
  if (!real_gpu()) GTEST_SKIP() << "no GPU";
  Tensor pinned = ones({1 << 18}).pin_memory();
  const void* p = pinned.raw_data_ptr();
  EXPECT_TRUE(is_pinned_pointer(p));
  pinned = Tensor();
  EXPECT_TRUE(is_pinned_pointer(p));  // idle, cached for reuse
  cuda::empty_cache();
  EXPECT_FALSE(is_pinned_pointer(p));  // given back with cudaFreeHost
}

TEST(CudaRuntime, RecordStreamIsForCudaTensors) {
  EXPECT_TRUE(throws_error([] { backend_for(kCPU).record_stream(nullptr, 0, nullptr); },
                           ErrorKind::Device, {"record_stream", "CUDA tensors only"}));
  if (!real_gpu()) GTEST_SKIP() << "no GPU (a cuda::Stream needs one)";
  Tensor t = ones({3});
  EXPECT_TRUE(throws_error([&] { t.record_stream(cuda::Stream::current()); }, ErrorKind::Device,
                           {"[record_stream] expected a CUDA tensor", "cpu", "CUDA-only"}));
}

TEST(CudaRuntime, RecordStreamKeepsMemoryFromReuse) {
  if (!real_gpu()) GTEST_SKIP() << "no GPU";
  TensorOptions gpu{.device = Device("cuda")};
  cuda::Stream side = cuda::Stream::create();
  Tensor x = randn({2048, 2048}, gpu);
  Tensor expected = mm(mm(x.cpu(), x.cpu()), x.cpu()).sum();
  const void* p = x.storage()->data();  // the device address (raw_data_ptr is for host tensors)
  Tensor y;
  {
    cuda::StreamGuard g(side);
    side.wait_stream(cuda::Stream::default_stream());  // x was written there
    y = mm(mm(x, x), x).sum();
  }
  x.record_stream(side);
  x = Tensor();  // freed while the side stream may still read it
  Tensor z = empty({2048, 2048}, gpu);
  // The side stream has no work queued after the free, so if it is still busy now it was busy
  // when z was allocated: x's block must not have been handed out.
  if (!side.query()) {
    EXPECT_NE(z.storage()->data(), p);
  }
  z.fill_(0);
  side.synchronize();
  EXPECT_TRUE(testing::tensor_close(y.cpu(), expected, 1e-3, 1e-2));
}

TEST(CudaRuntime, WaitStreamOrdersTwoStreams) {
  if (!real_gpu()) GTEST_SKIP() << "no GPU";
  cuda::Stream side = cuda::Stream::create();
  Tensor x = zeros({1 << 20}, TensorOptions{.device = Device("cuda")});
  x.add_(1);  // default stream
  Tensor y;
  {
    cuda::StreamGuard g(side);
    side.wait_stream(cuda::Stream::default_stream());
    y = x * 3;
  }
  cuda::Stream::default_stream().wait_stream(side);
  EXPECT_EQ(y.sum().item<float>(), 3.0f * (1 << 20));
  side.wait_stream(side);  // waiting for itself is a no-op
}

TEST(CudaRuntime, GraphCaptureAndReplay) {
  if (!real_gpu()) GTEST_SKIP() << "no GPU";
  TensorOptions gpu{.device = Device("cuda")};
  Tensor x = ones({1024, 64}, gpu);  // the graph's input: refilled between replays
  Tensor w = full({64, 8}, 0.5, gpu);
  cuda::Stream side = cuda::Stream::create();
  cuda::Graph graph;
  Tensor y;
  {
    cuda::StreamGuard g(side);
    side.wait_stream(cuda::Stream::default_stream());
    for (int i = 0; i < 2; ++i) y = (mm(x, w) * 2 + 1).sum();  // warm up (cuBLAS, the cache)
    graph.capture_begin();
    y = (mm(x, w) * 2 + 1).sum();
    graph.capture_end();
  }
  graph.replay();  // on the current (default) stream, after the capture's setup work
  EXPECT_EQ(y.item<float>(), 1024 * 8 * (64 * 0.5f * 2 + 1));
  x.fill_(2);
  graph.replay();
  EXPECT_EQ(y.item<float>(), 1024 * 8 * (128 * 0.5f * 2 + 1));
  EXPECT_TRUE(throws_error([&] { graph.capture_begin(); }, ErrorKind::Value, {"reset()"}));
  graph.reset();
  EXPECT_TRUE(throws_error([&] { graph.replay(); }, ErrorKind::Value, {"nothing to replay"}));
  EXPECT_TRUE(
      throws_error([&] { graph.capture_begin(); }, ErrorKind::Value, {"non-default stream"}));
  EXPECT_TRUE(throws_error([&] { graph.capture_end(); }, ErrorKind::Value, {"no capture"}));
}

TEST(CudaRuntime, CopiesBetweenGpus) {
  if (!real_gpu() || cuda::device_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  Tensor a = arange(0, 1000, 1, TensorOptions{.device = Device("cuda:0")});
  Tensor b = a.to(Device("cuda:1"));
  EXPECT_EQ(b.device(), Device("cuda:1"));
  Tensor c = b * 2;
  EXPECT_TRUE(testing::tensor_equal(c.cpu(), a.cpu() * 2));
  EXPECT_EQ(cuda::can_device_access_peer(0, 1), cuda::can_device_access_peer(1, 0));
  // Strided source, dtype conversion, strided destination, and back the other way.
  Tensor m = randn({64, 48}, TensorOptions{.device = Device("cuda:1")});
  Tensor t = m.t().to(Device("cuda:0"), kFloat64);
  EXPECT_EQ(t.device(), Device("cuda:0"));
  EXPECT_TRUE(testing::tensor_equal(t.cpu(), m.cpu().t().to(kFloat64)));
  Tensor dst = zeros({48, 128}, TensorOptions{.device = Device("cuda:1")});
  dst.slice(1, 0, 128, 2).copy_(t);
  EXPECT_TRUE(testing::tensor_equal(dst.cpu().slice(1, 0, 128, 2), m.cpu().t()));
  // Work queued on the destination before the copy is not overtaken by it.
  Tensor big = full({1 << 22}, 3.0, TensorOptions{.device = Device("cuda:0")});
  Tensor target = zeros({1 << 22}, TensorOptions{.device = Device("cuda:1")});
  target.add_(1.0);
  target.copy_(big);
  EXPECT_EQ(target.sum().item<float>(), 3.0f * (1 << 22));
}

}  // namespace
}  // namespace ember
