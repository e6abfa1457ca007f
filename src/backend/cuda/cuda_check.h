// backend/cuda/cuda_check.h: checked CUDA calls and launches, the current stream, and device
// memory for kernels' scratch space. Internal to the CUDA backend; needs the CUDA headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace ember::cuda_detail {

// Throws ember::Error for a failed call: OutOfMemory for cudaErrorMemoryAllocation, else Cuda,
// naming the CUDA error and `op`.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* op, const char* file, int line);

inline void check(cudaError_t err, const char* op, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, op, file, line);
}

// GPUs the CUDA runtime sees (0 without a driver), whatever backend is registered for kCUDA.
int real_device_count();
// The calling thread's current device and the current stream of a device (-1: current device).
int current_device();
cudaStream_t current_stream(int device = -1);
// The device a device pointer lives on (the current device when only one GPU is present).
int device_of(const void* ptr);

// Scratch device memory from the caching allocator of the current device, freed on scope exit.
class Scratch {
 public:
  explicit Scratch(size_t nbytes);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
  int device_ = 0;
};

// Device memory through the per-device caching allocator (nbytes may be 0: nullptr).
void* device_allocate(size_t nbytes, int device);
void device_free(void* ptr, int device);
// Tensor::record_stream: the block at ptr (from device_allocate) is used by `stream`.
void device_record_stream(void* ptr, int device, cudaStream_t stream);

}  // namespace ember::cuda_detail

// A CUDA runtime call, checked: a failure throws ember::Error naming `op` and the CUDA error.
#define EMBER_CUDA_CHECK(expr, op) ::ember::cuda_detail::check((expr), (op), __FILE__, __LINE__)
// Checks the launch that just happened on this thread (bad configuration, missing kernel image).
#define EMBER_CUDA_CHECK_LAUNCH(op) \
  ::ember::cuda_detail::check(cudaGetLastError(), (op), __FILE__, __LINE__)
