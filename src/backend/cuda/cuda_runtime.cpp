// backend/cuda/cuda_runtime.cpp: devices, the current device and stream, streams and events, and
// the error checking every CUDA call of the backend goes through.
#include <cuda_runtime_api.h>

#include <array>
#include <cstring>
#include <mutex>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_raw.h"
#include "core/backend.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember {

namespace cuda_detail {

namespace {
constexpr int kMaxDevices = 64;
}  // namespace

int real_device_count() {
  static int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      n = 0;
    }
    return n;
  }();
  return count;
}

namespace {
// The current stream of each device, per thread; null is the device's default stream.
thread_local std::array<cudaStream_t, kMaxDevices> tls_current_stream{};

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

void check_index(int index, const char* op) {
  int count = real_device_count();
  EMBER_CHECK_KIND(Device, index >= 0 && index < count && index < kMaxDevices, "[", op,
                   "] no CUDA device ", index, ": ", count, " present",
                   count == 0 ? " (no NVIDIA driver or GPU was found)" : "");
}
}  // namespace

void throw_cuda_error(cudaError_t err, const char* op, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so that later calls do not see it
  if (err == cudaErrorMemoryAllocation)
    EMBER_THROW(OutOfMemory, "[", op, "] CUDA out of memory (", cudaGetErrorName(err), ") at ",
                base_name(file), ":", line);
  EMBER_THROW(Cuda, "[", op, "] CUDA error ", cudaGetErrorName(err), ": ", cudaGetErrorString(err),
              " (", base_name(file), ":", line,
              "). Errors of earlier asynchronous work surface here; run with "
              "CUDA_LAUNCH_BLOCKING=1 to find the failing op.");
}

bool query_done(cudaError_t err, const char* op) {
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  check(err, op, __FILE__, __LINE__);
  return true;
}

int current_device() {
  int d = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

cudaStream_t current_stream(int device) {
  if (device < 0) device = current_device();
  return device < kMaxDevices ? tls_current_stream[device] : nullptr;
}

void set_current_stream(int device, cudaStream_t stream) {
  check_index(device, "cuda::Stream::set_current");
  tls_current_stream[device] = stream;
}

int device_of(const void* ptr) {
  if (real_device_count() <= 1) return 0;
  cudaPointerAttributes attr{};
  EMBER_CUDA_CHECK(cudaPointerGetAttributes(&attr, ptr), "cudaPointerGetAttributes");
  return attr.device;
}

}  // namespace cuda_detail

namespace cuda {

using cuda_detail::check_index;

bool is_built() {
  return true;
}

DeviceProperties get_device_properties(int index) {
  check_index(index, "cuda::get_device_properties");
  cudaDeviceProp prop{};
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&prop, index), "cuda::get_device_properties");
  return DeviceProperties{prop.name, prop.totalGlobalMem, prop.major, prop.minor,
                          prop.multiProcessorCount};
}

int current_device() {
  check_index(0, "cuda::current_device");
  return cuda_detail::current_device();
}

void set_device(int index) {
  check_index(index, "cuda::set_device");
  EMBER_CUDA_CHECK(cudaSetDevice(index), "cuda::set_device");
}

void synchronize(int index) {
  if (index < 0) index = current_device();
  check_index(index, "cuda::synchronize");
  DeviceGuard guard(index);
  EMBER_CUDA_CHECK(cudaDeviceSynchronize(), "cuda::synchronize");
}

bool can_device_access_peer(int device, int peer) {
  check_index(device, "cuda::can_device_access_peer");
  check_index(peer, "cuda::can_device_access_peer");
  int can = 0;
  EMBER_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer), "cuda::can_device_access_peer");
  return can != 0;
}

DeviceGuard::DeviceGuard(int index) {
  if (index < 0) return;
  check_index(index, "cuda::DeviceGuard");
  previous_ = cuda_detail::current_device();
  if (previous_ != index) EMBER_CUDA_CHECK(cudaSetDevice(index), "cuda::DeviceGuard");
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);  // a destructor must not throw
}

Stream Stream::create(int device) {
  if (device < 0) device = current_device();
  DeviceGuard guard(device);
  cudaStream_t s = nullptr;
  EMBER_CUDA_CHECK(cudaStreamCreate(&s), "cuda::Stream::create");
  return Stream(s, device);
}

Stream Stream::default_stream(int device) {
  if (device < 0) device = current_device();
  check_index(device, "cuda::Stream::default_stream");
  return Stream(nullptr, device);
}

Stream Stream::current(int device) {
  if (device < 0) device = current_device();
  check_index(device, "cuda::Stream::current");
  return Stream(cuda_detail::current_stream(device), device);
}

void Stream::set_current(const Stream& stream) {
  cuda_detail::set_current_stream(stream.device_, static_cast<cudaStream_t>(stream.handle_));
}

void Stream::synchronize() const {
  DeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)),
                   "cuda::Stream::synchronize");
}

bool Stream::query() const {
  DeviceGuard guard(device_);
  return cuda_detail::query_done(cudaStreamQuery(static_cast<cudaStream_t>(handle_)),
                                 "cuda::Stream::query");
}

void Stream::wait_stream(const Stream& other) const {
  if (other == *this) return;
  Event ready;
  ready.record(other);
  ready.wait(*this);
}

StreamGuard::StreamGuard(const Stream& stream)
    : previous_(Stream::current(stream.device())), device_(stream.device()) {
  Stream::set_current(stream);
}

StreamGuard::~StreamGuard() {
  cuda_detail::tls_current_stream[previous_.device()] =
      static_cast<cudaStream_t>(previous_.handle());
}

struct Event::Impl {
  cudaEvent_t event = nullptr;
  int device = -1;
  bool timing = false;
  ~Impl() {
    if (event) cudaEventDestroy(event);
  }
};

Event::Event(bool enable_timing) : impl_(std::make_shared<Impl>()) {
  impl_->timing = enable_timing;
}

void Event::record(const Stream& stream) {
  DeviceGuard guard(stream.device());
  if (!impl_->event) {
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(
                         &impl_->event, impl_->timing ? cudaEventDefault : cudaEventDisableTiming),
                     "cuda::Event");
    impl_->device = stream.device();
  }
  EMBER_CHECK_KIND(Device, impl_->device == stream.device(),
                   "[cuda::Event::record] the event "
                   "belongs to cuda:",
                   impl_->device, " but the stream to cuda:", stream.device());
  EMBER_CUDA_CHECK(cudaEventRecord(impl_->event, static_cast<cudaStream_t>(stream.handle())),
                   "cuda::Event::record");
}

void Event::record() {
  record(Stream::current());
}

void Event::wait(const Stream& stream) const {
  if (!impl_->event) return;  // never recorded: nothing to wait for, as in PyTorch
  DeviceGuard guard(stream.device());
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream.handle()), impl_->event, 0),
                   "cuda::Event::wait");
}

void Event::synchronize() const {
  if (!impl_->event) return;
  EMBER_CUDA_CHECK(cudaEventSynchronize(impl_->event), "cuda::Event::synchronize");
}

bool Event::query() const {
  if (!impl_->event) return true;
  return cuda_detail::query_done(cudaEventQuery(impl_->event), "cuda::Event::query");
}

float Event::elapsed_time(const Event& end) const {
  EMBER_CHECK_KIND(Value, impl_->timing && end.impl_->timing,
                   "[cuda::Event::elapsed_time] both events need enable_timing=true");
  EMBER_CHECK_KIND(Value, impl_->event && end.impl_->event,
                   "[cuda::Event::elapsed_time] both events must be recorded first");
  float ms = 0;
  EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, impl_->event, end.impl_->event),
                   "cuda::Event::elapsed_time");
  return ms;
}

}  // namespace cuda

}  // namespace ember
