// ember/cuda.h: the CUDA runtime as the tutorial uses it -- availability, devices and their
// properties, streams and events, and the caching allocator's statistics. Availability checks
// answer false / 0 in a build without CUDA or on a machine without a driver or GPU; calls that
// need a GPU throw an ember::Error saying why ("ember was built without CUDA", "no CUDA device").
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace ember::cuda {
bool is_available();
int device_count();
// Throws an Error when there is no CUDA device `index`.
std::string get_device_name(int index = 0);
// Whether this build of ember has the CUDA backend compiled in.
bool is_built();

struct DeviceProperties {
  std::string name;
  size_t total_memory = 0;   // bytes
  int major = 0, minor = 0;  // compute capability
  int multi_processor_count = 0;
};
DeviceProperties get_device_properties(int index = 0);

// The current device of the calling thread, and changing it.
int current_device();
void set_device(int index);
// Waits for all work on `index` (the current device when -1).
void synchronize(int index = -1);
// Whether `device` can read and write `peer`'s memory directly (copies between the two then go
// over NVLink / PCIe peer to peer; others are staged through host memory by the driver).
bool can_device_access_peer(int device, int peer);

// Makes `index` the current device for the guard's lifetime (no-op for index -1).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// A CUDA stream of one device. The default stream has a null handle. Streams made by create()
// live until the program ends (as PyTorch's pooled streams do) and, unlike PyTorch's, are ordered
// with the default stream (cudaStreamDefault flags), so work queued there is never overtaken.
class Stream {
 public:
  static Stream create(int device = -1);
  static Stream default_stream(int device = -1);
  // Ops on `device` from this thread run on its current stream.
  static Stream current(int device = -1);
  static void set_current(const Stream& stream);

  void synchronize() const;
  bool query() const;  // true when all work on it is done
  // Work queued on this stream from now on waits for the work queued on `other` so far.
  void wait_stream(const Stream& other) const;
  int device() const { return device_; }
  void* handle() const { return handle_; }  // the cudaStream_t
  bool operator==(const Stream& o) const { return handle_ == o.handle_ && device_ == o.device_; }

 private:
  Stream(void* handle, int device) : handle_(handle), device_(device) {}
  void* handle_ = nullptr;
  int device_ = 0;
};

// Makes `stream` (and its device) current for the guard's lifetime.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
  DeviceGuard device_;
};

// A CUDA event: record on a stream, make other streams wait for it, time between two.
class Event {
 public:
  explicit Event(bool enable_timing = false);
  void record(const Stream& stream);
  void record();                          // on the current stream of the current device
  void wait(const Stream& stream) const;  // `stream` waits until this event has happened
  void synchronize() const;
  bool query() const;
  // Milliseconds from this event to `end` (both recorded, timing enabled).
  float elapsed_time(const Event& end) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// A CUDA graph (torch.cuda.CUDAGraph): the work queued on the current stream between
// capture_begin and capture_end, replayed by one launch on the current stream. Capture on a
// stream made with Stream::create (not the default stream); run the step a few times first (warm
// up) so that one-time setup is not captured. Tensors allocated during the capture come from a
// private pool that the graph keeps until reset(), so replays write the same memory: read the
// outputs of the captured ops, and write new inputs into the tensors the capture read (copy_).
// Tensors the graph reads must stay alive until reset(). What the host computes is fixed at
// capture time: random numbers, learning rates, and Adam's step count (its bias corrections)
// replay as captured -- SGD with a fixed lr and no schedule replays correctly.
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void capture_begin();
  void capture_end();
  void replay();
  // Frees the graph and gives its memory pool back (tensors still using it keep their blocks).
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The caching allocator of device `index` (the current device when -1). Zero, and empty_cache a
// no-op, in a build without CUDA.
void empty_cache();
size_t memory_allocated(int index = -1);
size_t memory_reserved(int index = -1);
size_t max_memory_allocated(int index = -1);
void reset_peak_memory_stats(int index = -1);
}  // namespace ember::cuda

namespace ember::mps {
// Apple's Metal backend; ember has none, so this is false everywhere.
bool is_available();
}  // namespace ember::mps
