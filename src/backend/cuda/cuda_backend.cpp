// backend/cuda/cuda_backend.cpp: the Backend of NVIDIA GPUs -- device discovery, memory through
// the per-device caching allocator, host<->device copies (asynchronous from and to pinned
// memory), and every compute entry dispatched to the kernels of the .cu files on the current
// stream of the tensor's device.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_kernels.h"
#include "core/backend.h"
#include "core/pinned_memory.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember {

namespace cuda_detail {
void record_pinned_use(const void* host_ptr, cudaStream_t stream);
}  // namespace cuda_detail

namespace {

using namespace cuda_detail;

// Makes the device that holds `ptr` current while an op runs (nothing to do with one GPU).
class OpGuard {
 public:
  explicit OpGuard(const void* ptr) {
    if (real_device_count() > 1 && ptr) guard_.emplace(device_of(ptr));
  }

 private:
  std::optional<cuda::DeviceGuard> guard_;
};

// Makes `waiter` (of device waiter_dev) wait for the work queued so far on `stream`, which
// belongs to the current device.
void stream_wait(cudaStream_t waiter, int waiter_dev, cudaStream_t stream) {
  cudaEvent_t e = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "copy cuda -> cuda");
  cudaError_t err = cudaEventRecord(e, stream);
  if (err == cudaSuccess) {
    cuda::DeviceGuard guard(waiter_dev);
    err = cudaStreamWaitEvent(waiter, e, 0);
  }
  cudaEventDestroy(e);  // released once it has completed; the wait stays in place
  EMBER_CUDA_CHECK(err, "copy cuda -> cuda (stream ordering)");
}

// Lets each of the two devices read the other's memory directly when the hardware allows it
// (once per pair); cudaMemcpyPeerAsync works either way, staging through the host otherwise.
void enable_peer_access(int a, int b) {
  static std::mutex mutex;
  static std::set<std::pair<int, int>> done;
  if (a == b) return;
  std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert({std::min(a, b), std::max(a, b)}).second) return;
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    int can = 0;
    EMBER_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to), "cudaDeviceCanAccessPeer");
    if (!can) continue;
    cuda::DeviceGuard guard(from);
    cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled)
      cudaGetLastError();
    else
      EMBER_CUDA_CHECK(err, "cudaDeviceEnablePeerAccess");
  }
}

class CudaBackend : public Backend {
 public:
  int device_count() override { return real_device_count(); }
  std::string device_name(int index) override { return cuda::get_device_properties(index).name; }

  void* allocate(size_t nbytes, int index) override { return device_allocate(nbytes, index); }
  void deallocate(void* ptr, size_t, int index) override { device_free(ptr, index); }

  void copy(const View& dst, const View& src) override {
    OpGuard g(dst.data);
    launch_copy(dst, src);
  }
  void copy_from_host(void* dst, const void* src, size_t nbytes, int index,
                      bool non_blocking) override {
    if (nbytes == 0) return;
    cuda::DeviceGuard guard(index);
    cudaStream_t stream = current_stream(index);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, stream),
                     "copy cpu -> cuda");
    if (non_blocking && is_pinned_pointer(src))
      record_pinned_use(src, stream);  // the pinned block is not reused before the copy ends
    else
      EMBER_CUDA_CHECK(cudaStreamSynchronize(stream), "copy cpu -> cuda");
  }
  void copy_to_host(void* dst, const void* src, size_t nbytes, int index,
                    bool non_blocking) override {
    if (nbytes == 0) return;
    cuda::DeviceGuard guard(index);
    cudaStream_t stream = current_stream(index);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, stream),
                     "copy cuda -> cpu");
    if (non_blocking && is_pinned_pointer(dst))
      record_pinned_use(dst, stream);  // the data is there after cuda::synchronize()
    else
      EMBER_CUDA_CHECK(cudaStreamSynchronize(stream), "copy cuda -> cpu");
  }
  // As PyTorch: the copy runs on the source device's current stream after a two-way barrier --
  // it waits for the work queued on the destination's current stream (which may still read or
  // write dst), and that stream then waits for the copy -- so both sides see it in stream order.
  bool copy_between_devices(void* dst, int dst_index, const void* src, int src_index,
                            size_t nbytes) override {
    if (nbytes == 0) return true;
    enable_peer_access(dst_index, src_index);
    cudaStream_t dst_stream = current_stream(dst_index);
    cudaStream_t src_stream = current_stream(src_index);
    {
      cuda::DeviceGuard guard(dst_index);
      stream_wait(src_stream, src_index, dst_stream);
    }
    cuda::DeviceGuard guard(src_index);
    EMBER_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_index, src, src_index, nbytes, src_stream),
                     "copy cuda -> cuda (cudaMemcpyPeerAsync)");
    stream_wait(dst_stream, dst_index, src_stream);
    return true;
  }
  void record_stream(void* ptr, int index, void* stream) override {
    cuda::DeviceGuard guard(index);
    device_record_stream(ptr, index, static_cast<cudaStream_t>(stream));
  }
  void fill(const View& dst, const Scalar& value) override {
    OpGuard g(dst.data);
    launch_fill(dst, value);
  }
  void unary(UnaryOp op, const View& dst, const View& src, const UnaryParams& p) override {
    OpGuard g(dst.data);
    launch_unary(op, dst, src, p);
  }
  void binary(BinaryOp op, const View& dst, const View& a, const View& b) override {
    OpGuard g(dst.data);
    launch_binary(op, dst, a, b);
  }
  void where(const View& dst, const View& cond, const View& a, const View& b) override {
    OpGuard g(dst.data);
    launch_where(dst, cond, a, b);
  }
  void reduce(ReduceOp op, const View& dst, const View& src, uint64_t mask) override {
    OpGuard g(dst.data);
    launch_reduce(op, dst, src, mask);
  }
  void matmul(const View& dst, const View& a, const View& b) override {
    OpGuard g(dst.data);
    launch_matmul(dst, a, b);
  }
  void softmax(const View& dst, const View& src, int64_t dim, bool log) override {
    OpGuard g(dst.data);
    launch_softmax(dst, src, dim, log);
  }
  void im2col(const View& cols, const View& image, const Conv2dGeometry& geo) override {
    OpGuard g(cols.data);
    launch_im2col(cols, image, geo);
  }
  void col2im(const View& image, const View& cols, const Conv2dGeometry& geo) override {
    OpGuard g(image.data);
    launch_col2im(image, cols, geo);
  }
  void max_pool2d(const View& values, const View& indices, const View& image,
                  const Conv2dGeometry& geo) override {
    OpGuard g(values.data);
    launch_max_pool2d(values, indices, image, geo);
  }
  void max_pool2d_backward(const View& grad_image, const View& grad_out, const View& indices,
                           const Conv2dGeometry& geo) override {
    OpGuard g(grad_image.data);
    launch_max_pool2d_backward(grad_image, grad_out, indices, geo);
  }
  void index_select(const View& dst, const View& src, int64_t dim, const View& index) override {
    OpGuard g(dst.data);
    launch_index_select(dst, src, dim, index);
  }
  void gather(const View& dst, const View& src, int64_t dim, const View& index) override {
    OpGuard g(dst.data);
    launch_gather(dst, src, dim, index);
  }
  void scatter_add(const View& dst, int64_t dim, const View& index, const View& src) override {
    OpGuard g(dst.data);
    launch_scatter_add(dst, dim, index, src);
  }
  void random(RandomKind kind, const View& dst, uint64_t seed, uint64_t counter, double a,
              double b) override {
    OpGuard g(dst.data);
    launch_random(kind, dst, seed, counter, a, b);
  }
  void optimizer_step(const OptimizerStep& step, std::span<const View> params,
                      std::span<const View> grads, std::span<const View> state1,
                      std::span<const View> state2, std::span<const View> state3) override {
    if (params.empty()) return;
    OpGuard g(params[0].data);
    launch_optimizer_step(step, params, grads, state1, state2, state3);
  }
  void synchronize(int index) override { cuda::synchronize(index); }
};

}  // namespace

Backend* cuda_backend() {
  static CudaBackend backend;
  return &backend;
}

}  // namespace ember
