// backend/cuda/cuda_stub.cpp: the CUDA entry points of a build without CUDA. Availability answers
// false / 0, memory statistics 0, and everything that needs a GPU throws a clear Error.
#include "core/backend.h"
#include "core/pinned_memory.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember {

namespace {
[[noreturn]] void no_cuda(const char* op) {
  EMBER_THROW(Device, "[", op,
              "] ember was built without CUDA; rebuild with -DEMBER_CUDA=ON "
              "(cmake --preset cuda) on a machine with the CUDA toolkit to use GPUs.");
}
}  // namespace

Backend* cuda_backend() {
  return nullptr;
}

void* pinned_allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  no_cuda("pin_memory");
}
void pinned_free(void*) {}
bool pinned_memory_available() {
  return false;
}
bool is_pinned_pointer(const void*) {
  return false;
}
void pinned_empty_cache() {}

namespace cuda {

bool is_built() {
  return false;
}
DeviceProperties get_device_properties(int) {
  no_cuda("cuda::get_device_properties");
}
int current_device() {
  no_cuda("cuda::current_device");
}
void set_device(int) {
  no_cuda("cuda::set_device");
}
void synchronize(int) {
  no_cuda("cuda::synchronize");
}
bool can_device_access_peer(int, int) {
  no_cuda("cuda::can_device_access_peer");
}

DeviceGuard::DeviceGuard(int index) {
  if (index >= 0) no_cuda("cuda::DeviceGuard");
}
DeviceGuard::~DeviceGuard() = default;

Stream Stream::create(int) {
  no_cuda("cuda::Stream::create");
}
Stream Stream::default_stream(int) {
  no_cuda("cuda::Stream::default_stream");
}
Stream Stream::current(int) {
  no_cuda("cuda::Stream::current");
}
void Stream::set_current(const Stream&) {
  no_cuda("cuda::Stream::set_current");
}
void Stream::synchronize() const {
  no_cuda("cuda::Stream::synchronize");
}
bool Stream::query() const {
  no_cuda("cuda::Stream::query");
}
void Stream::wait_stream(const Stream&) const {
  no_cuda("cuda::Stream::wait_stream");
}

StreamGuard::StreamGuard(const Stream& stream) : previous_(stream), device_(-1) {
  no_cuda("cuda::StreamGuard");
}
StreamGuard::~StreamGuard() = default;

struct Event::Impl {};
Event::Event(bool) {
  no_cuda("cuda::Event");
}
void Event::record(const Stream&) {
  no_cuda("cuda::Event::record");
}
void Event::record() {
  no_cuda("cuda::Event::record");
}
void Event::wait(const Stream&) const {
  no_cuda("cuda::Event::wait");
}
void Event::synchronize() const {
  no_cuda("cuda::Event::synchronize");
}
bool Event::query() const {
  no_cuda("cuda::Event::query");
}
float Event::elapsed_time(const Event&) const {
  no_cuda("cuda::Event::elapsed_time");
}

struct Graph::Impl {};
Graph::Graph() {
  no_cuda("cuda::Graph");
}
Graph::~Graph() = default;
void Graph::capture_begin() {
  no_cuda("cuda::Graph::capture_begin");
}
void Graph::capture_end() {
  no_cuda("cuda::Graph::capture_end");
}
void Graph::replay() {
  no_cuda("cuda::Graph::replay");
}
void Graph::reset() {}

void empty_cache() {}
size_t memory_allocated(int) {
  return 0;
}
size_t memory_reserved(int) {
  return 0;
}
size_t max_memory_allocated(int) {
  return 0;
}
void reset_peak_memory_stats(int) {}

}  // namespace cuda

}  // namespace ember
