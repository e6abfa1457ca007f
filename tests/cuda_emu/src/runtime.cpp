// tests/cuda_emu/src/runtime.cpp: the CUDA runtime calls of the emulated device -- devices and
// their properties, device and pinned memory (guard bytes around each allocation, new memory
// filled with 0xff so that reading it before writing gives NaNs and -1s), copies and sets checked
// against the live allocations, streams that run their work when it is queued, events, peer
// access, and stream capture into graphs with the toolkit's rules on what a capture forbids.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "emu_internal.h"

struct CUstream_st {
  int device = 0;
  bool capturing = false;
  bool invalidated = false;
  std::string invalid_reason;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::vector<std::function<void()>> captured;
};

struct CUevent_st {
  int device = 0;
  unsigned flags = 0;
  bool recorded = false;
  std::chrono::steady_clock::time_point when;
};

struct CUgraph_st {
  std::vector<std::function<void()>> work;
};
struct CUgraphExec_st {
  std::vector<std::function<void()>> work;
};

namespace ember_cuda_emu {

namespace {

constexpr size_t kGuard = 256;  // guard bytes on each side; also the allocations' alignment
constexpr unsigned char kGuardByte = 0xa5;
constexpr size_t kDeviceBytes = size_t{8} << 30;  // what each emulated GPU reports and holds

struct Live {
  size_t size;
  int device;  // -1: pinned host memory
};

struct State {
  std::mutex mutex;
  std::map<uintptr_t, Live> live;      // by the user pointer
  std::vector<size_t> used;            // device bytes in use
  std::set<std::pair<int, int>> peer;  // (from, to) with access enabled
  std::vector<CUstream_st*> default_streams;
  std::set<CUstream_st*> streams;
  std::set<CUevent_st*> events;
  std::map<const void*, int> max_dynamic_shared;
  int global_captures = 0;  // captures in global mode under way
  int devices = 2;
};

State& state() {
  static auto* s = [] {
    auto* st = new State();
    if (const char* v = std::getenv("EMBER_CUDA_EMU_DEVICES")) st->devices = std::atoi(v);
    st->devices = std::clamp(st->devices, 0, 8);
    st->used.assign(static_cast<size_t>(st->devices), 0);
    for (int d = 0; d < st->devices; ++d) {
      auto* ds = new CUstream_st();
      ds->device = d;
      st->default_streams.push_back(ds);
    }
    return st;
  }();
  return *s;
}

thread_local int tls_device = 0;
thread_local cudaError_t tls_last_error = cudaSuccess;
thread_local std::string tls_last_message;
thread_local cudaError_t tls_message_code = cudaSuccess;  // the code tls_last_message explains
thread_local cudaStreamCaptureMode tls_capture_mode = cudaStreamCaptureModeGlobal;
thread_local int tls_captures = 0;  // captures this thread began and has not ended
std::atomic<int> faults{0};

std::string hex(const void* p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

bool valid_device(int d) {
  return d >= 0 && d < state().devices;
}

CUstream_st* resolve(cudaStream_t s) {
  State& st = state();
  if (!s) return valid_device(tls_device) ? st.default_streams[tls_device] : nullptr;
  std::lock_guard<std::mutex> lock(st.mutex);
  return st.streams.count(s) ? s : nullptr;
}

bool live_event(cudaEvent_t e) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  return e && st.events.count(e);
}

// Whether a call that may synchronize with the host (or allocate) is refused now: a capture in
// global mode is under way anywhere, or this thread's own capture, and the thread has not
// switched to relaxed mode (cudaThreadExchangeStreamCaptureMode).
bool capture_forbids(const char* call) {
  State& st = state();
  if (tls_capture_mode == cudaStreamCaptureModeRelaxed) return false;
  bool forbid;
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    forbid = st.global_captures > 0 || tls_captures > 0;
    if (forbid)
      for (CUstream_st* s : st.streams)
        if (s->capturing && !s->invalidated) {
          s->invalidated = true;
          s->invalid_reason = std::string(call) + " was called during the capture";
        }
  }
  if (forbid)
    record_error(cudaErrorStreamCaptureUnsupported,
                 std::string("operation not permitted when stream is capturing: ") + call +
                     " during a stream capture (the capture is invalidated)");
  return forbid;
}

// Forgets and deletes a live stream or event.
template <class H>
cudaError_t destroy(std::set<H*>& live, H* handle, const char* call) {
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (!live.erase(handle))
      return record_error(cudaErrorInvalidResourceHandle,
                          std::string(call) + ": not a live handle");
  }
  delete handle;
  return cudaSuccess;
}

void fill_guards(unsigned char* user, size_t size) {
  std::memset(user - kGuard, kGuardByte, kGuard);
  std::memset(user + size, kGuardByte, kGuard);
}

cudaError_t allocate(void** ptr, size_t nbytes, int device, const char* call) {
  if (!ptr) return record_error(cudaErrorInvalidValue, std::string(call) + ": null pointer");
  *ptr = nullptr;
  if (capture_forbids(call)) return cudaErrorStreamCaptureUnsupported;
  State& st = state();
  if (device >= 0) {
    std::lock_guard<std::mutex> lock(st.mutex);
    if (nbytes > kDeviceBytes - st.used[device])
      return record_error(cudaErrorMemoryAllocation, "out of memory");
    st.used[device] += nbytes;
  }
  size_t total = (nbytes + 2 * kGuard + kGuard - 1) / kGuard * kGuard;
  auto* raw = static_cast<unsigned char*>(std::aligned_alloc(kGuard, total));
  if (!raw) {
    if (device >= 0) {
      std::lock_guard<std::mutex> lock(st.mutex);
      st.used[device] -= nbytes;
    }
    return record_error(cudaErrorMemoryAllocation, "out of memory");
  }
  unsigned char* user = raw + kGuard;
  std::memset(user, 0xff, nbytes);
  fill_guards(user, nbytes);
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    st.live[reinterpret_cast<uintptr_t>(user)] = Live{nbytes, device};
  }
  *ptr = user;
  return cudaSuccess;
}

cudaError_t release(void* ptr, bool pinned, const char* call) {
  if (!ptr) return cudaSuccess;
  State& st = state();
  Live l{};
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    auto it = st.live.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == st.live.end() || (it->second.device < 0) != pinned)
      return record_error(cudaErrorInvalidValue, std::string(call) + "(" + hex(ptr) +
                                                     "): not a pointer that " +
                                                     (pinned ? "cudaHostAlloc" : "cudaMalloc") +
                                                     " returned, or freed twice");
    l = it->second;
  }
  std::string damage = check_guards();
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    st.live.erase(reinterpret_cast<uintptr_t>(ptr));
    if (l.device >= 0) st.used[l.device] -= l.size;
  }
  std::free(static_cast<unsigned char*>(ptr) - kGuard);
  if (!damage.empty()) {
    count_fault();
    return record_error(cudaErrorIllegalAddress, damage);
  }
  return cudaSuccess;
}

// What a copy touches: [p, p + n) in device memory (device >= 0) or anywhere else on the host.
bool check_side(const void* p, size_t n, bool device_side, const char* call, const char* side) {
  Allocation a{};
  bool found = find_allocation(p, n, &a);
  if (device_side && (!found || a.device < 0)) {
    record_error(cudaErrorInvalidValue, std::string(call) + ": the " + side + " [" + hex(p) +
                                            ", +" + std::to_string(n) +
                                            ") is not inside one live device allocation");
    return false;
  }
  if (!device_side && found && a.device >= 0) {
    record_error(cudaErrorInvalidValue, std::string(call) + ": the " + side + " " + hex(p) +
                                            " is device memory, but the copy's kind says host");
    return false;
  }
  return true;
}

}  // namespace

int device_count() {
  return state().devices;
}

int current_device() {
  return tls_device;
}

bool find_allocation(const void* p, size_t nbytes, Allocation* out) {
  State& st = state();
  auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(st.mutex);
  auto it = st.live.upper_bound(addr);
  if (it == st.live.begin()) return false;
  --it;
  if (addr < it->first || addr > it->first + it->second.size) return false;
  if (nbytes > it->first + it->second.size - addr) return false;
  if (out)
    *out = Allocation{reinterpret_cast<const unsigned char*>(it->first), it->second.size,
                      it->second.device};
  return true;
}

bool can_access(int from, int to) {
  if (from == to) return true;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  return st.peer.count({from, to}) > 0;
}

std::string check_guards() {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  for (auto& [addr, l] : st.live) {
    auto* user = reinterpret_cast<unsigned char*>(addr);
    for (int side = 0; side < 2; ++side) {
      unsigned char* g = side ? user + l.size : user - kGuard;
      for (size_t i = 0; i < kGuard; ++i)
        if (g[i] != kGuardByte) {
          std::ostringstream os;
          os << "out-of-bounds write: " << (side ? i + 1 : kGuard - i) << " byte(s) "
             << (side ? "past the end" : "before the start") << " of a "
             << (l.device >= 0 ? "device" : "pinned host") << " allocation of " << l.size
             << " bytes at " << user << " were overwritten";
          fill_guards(user, l.size);
          return os.str();
        }
    }
  }
  return "";
}

bool check_device_range(const void* p, size_t nbytes, const std::string& what) {
  Allocation a{};
  if (find_allocation(p, nbytes, &a) && a.device >= 0) return true;
  record_error(cudaErrorInvalidValue, what + " [" + hex(p) + ", +" + std::to_string(nbytes) +
                                          ") is not inside one live device allocation");
  return false;
}

int stream_device(cudaStream_t stream) {
  CUstream_st* s = resolve(stream);
  return s ? s->device : -1;
}

cudaError_t record_error(cudaError_t err, const std::string& message) {
  tls_last_error = err;
  tls_message_code = err;
  tls_last_message = "[emulated CUDA device] " + message;
  return err;
}

cudaError_t submit_work(cudaStream_t stream, const char* what, std::function<void()> work) {
  CUstream_st* s = resolve(stream);
  if (!s)
    return record_error(cudaErrorInvalidResourceHandle, std::string(what) + ": not a live stream");
  State& st = state();
  if (s->capturing) {
    if (!s->invalidated) s->captured.push_back(std::move(work));
    return cudaSuccess;
  }
  if (!stream) {  // the legacy stream synchronizes with every stream of its device
    std::lock_guard<std::mutex> lock(st.mutex);
    bool clash = false;
    for (CUstream_st* o : st.streams)
      if (o->capturing && o->device == s->device && o->mode != cudaStreamCaptureModeRelaxed) {
        o->invalidated = true;
        o->invalid_reason = std::string(what) + " ran on the legacy default stream";
        clash = true;
      }
    if (clash)
      return record_error(cudaErrorStreamCaptureImplicit,
                          std::string(what) +
                              " on the legacy default stream while a stream of its device is "
                              "being captured (the capture is invalidated)");
  }
  work();
  return cudaSuccess;
}

int fault_count() {
  return faults.load();
}

void count_fault() {
  ++faults;
}

cudaError_t set_max_dynamic_shared(const void* kernel, int bytes) {
  if (bytes < 0 || bytes > 232448)
    return record_error(cudaErrorInvalidValue,
                        "cudaFuncSetAttribute: " + std::to_string(bytes) +
                            " bytes of dynamic shared memory exceed the device's 232448");
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.max_dynamic_shared[kernel] = bytes;
  return cudaSuccess;
}

int max_dynamic_shared(const void* kernel) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  auto it = st.max_dynamic_shared.find(kernel);
  return it == st.max_dynamic_shared.end() ? 48 * 1024 : it->second;
}

}  // namespace ember_cuda_emu

using namespace ember_cuda_emu;

cudaError_t cudaGetDeviceCount(int* count) {
  *count = device_count();
  if (*count == 0)
    return record_error(cudaErrorNoDevice, "no emulated device (EMBER_CUDA_EMU_DEVICES=0)");
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  *device = tls_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (!valid_device(device))
    return record_error(cudaErrorInvalidDevice, "cudaSetDevice(" + std::to_string(device) + "): " +
                                                    std::to_string(device_count()) + " devices");
  tls_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!valid_device(device)) return record_error(cudaErrorInvalidDevice, "cudaGetDeviceProperties");
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof(prop->name), "ember emulated CUDA device (sm_90)");
  prop->totalGlobalMem = kDeviceBytes;
  prop->sharedMemPerBlock = 48 * 1024;
  prop->sharedMemPerBlockOptin = 232448;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 132;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!valid_device(device)) return record_error(cudaErrorInvalidDevice, "cudaDeviceGetAttribute");
  switch (attr) {
    case cudaDevAttrComputeCapabilityMajor:
      *value = 9;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
      *value = 0;
      return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = 232448;
      return cudaSuccess;
  }
  return record_error(cudaErrorInvalidValue, "cudaDeviceGetAttribute: attribute not emulated");
}

cudaError_t cudaDeviceSynchronize() {
  if (capture_forbids("cudaDeviceSynchronize")) return cudaErrorStreamCaptureUnsupported;
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  if (!valid_device(device) || !valid_device(peer))
    return record_error(cudaErrorInvalidDevice, "cudaDeviceCanAccessPeer");
  *can = device != peer;
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags) {
  if (!valid_device(peer) || peer == tls_device || flags != 0)
    return record_error(cudaErrorInvalidDevice, "cudaDeviceEnablePeerAccess");
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (!st.peer.insert({tls_device, peer}).second)
    return record_error(cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled");
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  cudaError_t e = tls_last_error;
  tls_last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() {
  return tls_last_error;
}

const char* cudaGetErrorName(cudaError_t err) {
  switch (err) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorNoDevice:
      return "cudaErrorNoDevice";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    case cudaErrorIllegalAddress:
      return "cudaErrorIllegalAddress";
    case cudaErrorPeerAccessAlreadyEnabled:
      return "cudaErrorPeerAccessAlreadyEnabled";
    case cudaErrorLaunchFailure:
      return "cudaErrorLaunchFailure";
    case cudaErrorStreamCaptureUnsupported:
      return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated:
      return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorStreamCaptureImplicit:
      return "cudaErrorStreamCaptureImplicit";
  }
  return "cudaErrorUnknown";
}

// The message of this thread's latest error of that code (what the emulator saw), else the name.
const char* cudaGetErrorString(cudaError_t err) {
  static thread_local std::string text;
  if (err != cudaSuccess && err == tls_message_code) {
    text = tls_last_message;
    return text.c_str();
  }
  return cudaGetErrorName(err);
}

cudaError_t cudaMalloc(void** ptr, size_t nbytes) {
  return allocate(ptr, nbytes, tls_device, "cudaMalloc");
}

cudaError_t cudaFree(void* ptr) {
  return release(ptr, false, "cudaFree");
}

cudaError_t cudaHostAlloc(void** ptr, size_t nbytes, unsigned flags) {
  if (flags != cudaHostAllocDefault)
    return record_error(cudaErrorInvalidValue, "cudaHostAlloc: flags not emulated");
  return allocate(ptr, nbytes, -1, "cudaHostAlloc");
}

cudaError_t cudaFreeHost(void* ptr) {
  return release(ptr, true, "cudaFreeHost");
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  *total = kDeviceBytes;
  *free_bytes = kDeviceBytes - st.used[tls_device];
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attr, const void* ptr) {
  Allocation a{};
  *attr = cudaPointerAttributes{cudaMemoryTypeUnregistered, -1, nullptr, nullptr};
  if (find_allocation(ptr, 0, &a)) {
    attr->type = a.device >= 0 ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
    attr->device = a.device >= 0 ? a.device : tls_device;
    attr->devicePointer = const_cast<void*>(ptr);
    if (a.device < 0) attr->hostPointer = const_cast<void*>(ptr);
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t nbytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  const char* call = "cudaMemcpyAsync";
  if (nbytes == 0) return cudaSuccess;
  bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind == cudaMemcpyDefault) {
    dst_dev = find_allocation(dst, nbytes, nullptr);
    src_dev = find_allocation(src, nbytes, nullptr);
  }
  if (!check_side(dst, nbytes, dst_dev, call, "destination") ||
      !check_side(src, nbytes, src_dev, call, "source"))
    return cudaErrorInvalidValue;
  return submit_work(stream, call, [=] { std::memmove(dst, src, nbytes); });
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t nbytes, cudaMemcpyKind kind) {
  if (capture_forbids("cudaMemcpy")) return cudaErrorStreamCaptureUnsupported;
  return cudaMemcpyAsync(dst, src, nbytes, kind, nullptr);
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                size_t nbytes, cudaStream_t stream) {
  if (nbytes == 0) return cudaSuccess;
  Allocation a{}, b{};
  if (!find_allocation(dst, nbytes, &a) || a.device != dst_device ||
      !find_allocation(src, nbytes, &b) || b.device != src_device)
    return record_error(cudaErrorInvalidValue,
                        "cudaMemcpyPeerAsync: the destination must lie in memory of cuda:" +
                            std::to_string(dst_device) +
                            " and the source in memory of cuda:" + std::to_string(src_device));
  return submit_work(stream, "cudaMemcpyPeerAsync", [=] { std::memmove(dst, src, nbytes); });
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t nbytes, cudaStream_t stream) {
  if (nbytes == 0) return cudaSuccess;
  if (!check_side(ptr, nbytes, true, "cudaMemsetAsync", "destination"))
    return cudaErrorInvalidValue;
  return submit_work(stream, "cudaMemsetAsync", [=] { std::memset(ptr, value, nbytes); });
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  auto* s = new CUstream_st();
  s->device = tls_device;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.streams.insert(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return destroy(state().streams, stream, "cudaStreamDestroy");
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  CUstream_st* s = resolve(stream);
  if (!s) return record_error(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize");
  if (s->capturing) {
    s->invalidated = true;
    s->invalid_reason = "cudaStreamSynchronize on the capturing stream";
    return record_error(cudaErrorStreamCaptureUnsupported,
                        "cudaStreamSynchronize on a stream being captured");
  }
  if (capture_forbids("cudaStreamSynchronize")) return cudaErrorStreamCaptureUnsupported;
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  if (!resolve(stream)) return record_error(cudaErrorInvalidResourceHandle, "cudaStreamQuery");
  if (capture_forbids("cudaStreamQuery")) return cudaErrorStreamCaptureUnsupported;
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  if (!resolve(stream) || !live_event(event) || flags != 0)
    return record_error(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent");
  return cudaSuccess;  // work runs when it is queued: everything recorded is already done
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  auto* e = new CUevent_st();
  e->device = tls_device;
  e->flags = flags;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.events.insert(e);
  *event = e;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!live_event(event)) return record_error(cudaErrorInvalidResourceHandle, "cudaEventRecord");
  int d = stream_device(stream);
  if (d < 0) return record_error(cudaErrorInvalidResourceHandle, "cudaEventRecord: not a stream");
  if (d != event->device)
    return record_error(
        cudaErrorInvalidResourceHandle,
        "cudaEventRecord: the event belongs to cuda:" + std::to_string(event->device) +
            ", the stream to cuda:" + std::to_string(d));
  return submit_work(stream, "cudaEventRecord", [event] {
    event->recorded = true;
    event->when = std::chrono::steady_clock::now();
  });
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!live_event(event)) return record_error(cudaErrorInvalidResourceHandle, "cudaEventQuery");
  if (capture_forbids("cudaEventQuery")) return cudaErrorStreamCaptureUnsupported;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!live_event(event))
    return record_error(cudaErrorInvalidResourceHandle, "cudaEventSynchronize");
  if (capture_forbids("cudaEventSynchronize")) return cudaErrorStreamCaptureUnsupported;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return destroy(state().events, event, "cudaEventDestroy");
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!live_event(start) || !live_event(end) || (start->flags & cudaEventDisableTiming) ||
      (end->flags & cudaEventDisableTiming) || !start->recorded || !end->recorded)
    return record_error(cudaErrorInvalidResourceHandle,
                        "cudaEventElapsedTime: both events need timing and a completed record");
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  std::swap(*mode, tls_capture_mode);
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (!stream)
    return record_error(cudaErrorStreamCaptureUnsupported,
                        "cudaStreamBeginCapture: the legacy default stream cannot be captured");
  CUstream_st* s = resolve(stream);
  if (!s) return record_error(cudaErrorInvalidResourceHandle, "cudaStreamBeginCapture");
  if (s->capturing)
    return record_error(cudaErrorIllegalAddress, "cudaStreamBeginCapture: already capturing");
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  s->capturing = true;
  s->invalidated = false;
  s->invalid_reason.clear();
  s->mode = mode;
  s->captured.clear();
  if (mode == cudaStreamCaptureModeGlobal) ++st.global_captures;
  if (mode != cudaStreamCaptureModeRelaxed) ++tls_captures;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  CUstream_st* s = resolve(stream);
  *graph = nullptr;
  if (!s || !s->capturing)
    return record_error(cudaErrorIllegalAddress,
                        "cudaStreamEndCapture: the stream is not capturing");
  State& st = state();
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    s->capturing = false;
    if (s->mode == cudaStreamCaptureModeGlobal) --st.global_captures;
    if (s->mode != cudaStreamCaptureModeRelaxed) --tls_captures;
  }
  if (s->invalidated)
    return record_error(cudaErrorStreamCaptureInvalidated,
                        "the capture was invalidated: " + s->invalid_reason);
  *graph = new CUgraph_st{std::move(s->captured)};
  s->captured.clear();
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (!graph) return record_error(cudaErrorInvalidValue, "cudaGraphInstantiate: no graph");
  *exec = new CUgraphExec_st{graph->work};
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (!exec) return record_error(cudaErrorInvalidValue, "cudaGraphLaunch: no graph");
  for (auto& w : exec->work) {
    cudaError_t err = submit_work(stream, "cudaGraphLaunch", w);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}
