// core/backend.cpp: the registry of device backends.
#include "core/backend.h"

#include <array>

namespace ember {

namespace {
std::array<Backend*, 3>& registry() {
  static std::array<Backend*, 3> backends{cpu_backend(), cuda_backend(), nullptr};
  return backends;
}
}  // namespace

void register_backend(DeviceType type, Backend* backend) {
  registry()[static_cast<size_t>(type)] = backend;
}

bool has_backend(DeviceType type) {
  return registry()[static_cast<size_t>(type)] != nullptr;
}

Backend& backend_for(DeviceType type) {
  Backend* b = registry()[static_cast<size_t>(type)];
  EMBER_CHECK_KIND(Device, b != nullptr, "[backend] this build of ember has no ",
                   device_type_name(type), " backend",
                   type == kCUDA ? " (build with -DEMBER_CUDA=ON)" : "");
  return *b;
}

}  // namespace ember
