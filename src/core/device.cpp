// core/device.cpp: parsing and printing devices, and checking that a device exists.
#include "ember/device.h"

#include <charconv>
#include <ostream>

#include "core/backend.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember {

namespace {
constexpr const char* kAccepted =
    "Expected one of: 'cpu', 'cuda', 'cuda:N' (N a GPU index >= 0), 'mps'";

[[noreturn]] void bad_spec(const std::string& spec, const char* why) {
  EMBER_THROW(Device, "[Device] invalid device string '", spec, "': ", why, ". ", kAccepted);
}

std::string available_devices() {
  std::string s = "cpu";
  int n = cuda::device_count();
  for (int i = 0; i < n; ++i) s.append(", cuda:").append(std::to_string(i));
  return s;
}
}  // namespace

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::CPU:
      return "cpu";
    case DeviceType::CUDA:
      return "cuda";
    case DeviceType::MPS:
      return "mps";
  }
  return "unknown";
}

Device::Device(DeviceType type, int index) : type_(type), index_(index) {
  EMBER_CHECK_KIND(Device, index >= -1, "[Device] device index must be >= 0, got ", index, ". ",
                   kAccepted);
  EMBER_CHECK_KIND(Device, type != kCPU || index <= 0,
                   "[Device] CPU device index must be -1 or zero, got ", index);
}

Device::Device(const char* spec) : Device(std::string(spec ? spec : "")) {}

Device::Device(const std::string& spec) : type_(kCPU), index_(-1) {
  if (spec.empty()) bad_spec(spec, "it is empty");
  auto colon = spec.find(':');
  std::string name = spec.substr(0, colon);
  if (name == "cpu")
    type_ = kCPU;
  else if (name == "cuda")
    type_ = kCUDA;
  else if (name == "mps")
    type_ = kMPS;
  else
    bad_spec(spec, "unknown device type");
  if (colon == std::string::npos) return;
  std::string idx = spec.substr(colon + 1);
  int value = -1;
  auto [end, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), value);
  if (idx.empty() || idx[0] == '-' || idx[0] == '+' || ec != std::errc() ||
      end != idx.data() + idx.size())
    bad_spec(spec, "the index must be a non-negative integer");
  if (type_ == kCPU && value != 0) bad_spec(spec, "the CPU device index must be 0");
  index_ = value;
}

std::string Device::str() const {
  std::string s = device_type_name(type_);
  if (index_ >= 0) s.append(":").append(std::to_string(index_));
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& device) {
  return os << device.str();
}

Device resolve_device(const Device& device) {
  switch (device.type()) {
    case DeviceType::CPU:
      return Device(kCPU);
    case DeviceType::MPS:
      EMBER_THROW(Device,
                  "[to] device mps is not available: ember has no MPS (Apple Metal) backend",
                  " and MPS exists only on macOS with Apple silicon. Available devices: ",
                  available_devices(), ". Use ember::best_device() to pick one that exists.");
    case DeviceType::CUDA:
      break;
  }
  int count = cuda::device_count();
  if (count == 0) {
    EMBER_THROW(Device, "[to] device ", device, " is not available: ",
                cuda::is_built()
                    ? "no NVIDIA driver or GPU was found"
                    : "this build of ember has no CUDA support (build with -DEMBER_CUDA=ON)",
                ". Available devices: ", available_devices(),
                ". Use ember::best_device() to fall back to the CPU.");
  }
  int index = device.has_index() ? device.index() : 0;
  EMBER_CHECK_KIND(Device, index < count, "[to] device ", device, " is not available: ", count,
                   " CUDA device", count == 1 ? "" : "s",
                   " present. Available devices: ", available_devices(), ".");
  return Device(kCUDA, index);
}

Device best_device() {
  return cuda::is_available() ? Device(kCUDA, 0) : Device(kCPU);
}

namespace cuda {
int device_count() {
  return has_backend(kCUDA) ? backend_for(kCUDA).device_count() : 0;
}
bool is_available() {
  return device_count() > 0;
}
std::string get_device_name(int index) {
  int count = device_count();
  EMBER_CHECK_KIND(Device, index >= 0 && index < count, "[cuda::get_device_name] no CUDA device ",
                   index, ": ", count, " present",
                   is_built() ? "" : " (this build of ember has no CUDA support)");
  return backend_for(kCUDA).device_name(index);
}
}  // namespace cuda

namespace mps {
bool is_available() {
  return false;
}
}  // namespace mps

}  // namespace ember
