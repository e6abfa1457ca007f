// tests/cuda_emu/src/emu_internal.h: what the emulator's runtime (runtime.cpp), scheduler
// (scheduler.cpp) and cuBLAS (cublas.cpp) share -- devices, streams, the live allocations and the
// last error of each host thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "ember_cuda_emu/runtime.h"

namespace ember_cuda_emu {

// Emulated GPUs (EMBER_CUDA_EMU_DEVICES, default 2) and the calling thread's current one.
int device_count();
int current_device();

// A live allocation: device memory of `device`, or pinned host memory (device -1).
struct Allocation {
  const unsigned char* begin;
  size_t size;
  int device;
};
// The live allocation holding [p, p + nbytes) (p may be its end when nbytes is 0); false if none.
bool find_allocation(const void* p, size_t nbytes, Allocation* out);
// Whether device `from` may read memory of `to` in a kernel (the same device or peer access on).
bool can_access(int from, int to);
// Checks the guard bytes around every live allocation; describes the first damage (and repairs
// it) or returns "".
std::string check_guards();

// The stream's device, or -1 for a handle that is not a live stream (the null stream is the
// current device's).
int stream_device(cudaStream_t stream);

// Records err as this thread's last error with a message that cudaGetErrorString returns for it.
cudaError_t record_error(cudaError_t err, const std::string& message);

// Runs `work` in stream order: now, or appended to the graph while the stream is captured.
// Fails (and invalidates the capture) for the legacy stream while a global capture runs.
cudaError_t submit_work(cudaStream_t stream, const char* what, std::function<void()> work);

// Faults of kernels so far (every one also fails its launch); the test main reports them.
int fault_count();
void count_fault();

}  // namespace ember_cuda_emu
