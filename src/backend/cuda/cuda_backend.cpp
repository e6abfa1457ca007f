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
  bool takes_half_attention(int64_t head_dim, int64_t value_dim, int index) override {
    return half_attention_fits(head_dim, value_dim,
                               index < 0 ? cuda_detail::current_device() : index);
  }
  // Every op of core/backend_ops.def: on the device that holds `on`, through its launcher.
#define EMBER_BACKEND_OP(name, params, args, on) \
  void name params override {                    \
    OpGuard guard(on);                           \
    launch_##name args;                          \
  }
#include "core/backend_ops.def"
#undef EMBER_BACKEND_OP
  void synchronize(int index) override {
    cuda::synchronize(index);
  }
};

}  // namespace

Backend* cuda_backend() {
  static CudaBackend backend;
  return &backend;
}

}  // namespace ember
