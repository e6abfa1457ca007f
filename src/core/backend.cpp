// core/backend.cpp: the registry of device backends, and what Backend's optional entries do when
// a backend does not override them.
#include "core/backend.h"

#include <array>

namespace ember {

namespace detail {
constinit std::array<Backend*, 3> g_backends{};
}  // namespace detail

namespace {
// Fills the table with the built-in backends on first use (other static initialisers may get
// here first, so the table is not filled at load time).
std::array<Backend*, 3>& registry() {
  static bool filled = [] {
    detail::g_backends = {cpu_backend(), cuda_backend(), nullptr};
    return true;
  }();
  (void)filled;
  return detail::g_backends;
}
}  // namespace

bool Backend::copy_between_devices(void*, int, const void*, int, size_t) {
  return false;
}

void Backend::record_stream(void*, int, void*) {
  EMBER_THROW(Device,
              "[record_stream] this device has no streams; record_stream is for CUDA "
              "tensors only");
}

bool Backend::takes_half_attention(int64_t, int64_t, int) {
  return false;
}

void Backend::not_implemented(const char* op) const {
  std::string device = "this backend's";
  for (size_t i = 0; i < registry().size(); ++i)
    if (registry()[i] == this) device = device_type_name(static_cast<DeviceType>(i));
  EMBER_THROW(NotImplemented, "[", op, "] is not implemented for ", device,
              " tensors; move them to a device that has it (e.g. .to(ember::kCPU))");
}

void register_backend(DeviceType type, Backend* backend) {
  registry()[static_cast<size_t>(type)] = backend;
}

bool has_backend(DeviceType type) {
  return registry()[static_cast<size_t>(type)] != nullptr;
}

Backend& backend_for_slow(DeviceType type) {
  Backend* b = registry()[static_cast<size_t>(type)];
  EMBER_CHECK_KIND(Device, b != nullptr, "[backend] this build of ember has no ",
                   device_type_name(type), " backend",
                   type == kCUDA ? " (build with -DEMBER_CUDA=ON)" : "");
  return *b;
}

}  // namespace ember
