// ember/device.h: where a tensor lives -- a device type (cpu, cuda, mps) and an index.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace ember {

enum class DeviceType : uint8_t { CPU, CUDA, MPS };
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;
inline constexpr DeviceType kMPS = DeviceType::MPS;

const char* device_type_name(DeviceType type);

class Device {
 public:
  // index -1 means "the current device of that type" (prints as "cuda", as torch.device("cuda")).
  Device(DeviceType type = kCPU, int index = -1);  // NOLINT: implicit, as in PyTorch
  // "cpu", "cuda", "cuda:1", "mps"; anything else throws an Error listing what is accepted.
  Device(const std::string& spec);  // NOLINT
  Device(const char* spec);         // NOLINT

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  bool is_mps() const { return type_ == kMPS; }
  std::string str() const;

  bool operator==(const Device& other) const = default;

 private:
  DeviceType type_;
  int index_;
};

std::ostream& operator<<(std::ostream& os, const Device& device);

// The device a tensor placed on `device` ends up on: "cuda" becomes "cuda:0" (the current one),
// and the device is checked to exist; throws an Error naming what is available otherwise.
Device resolve_device(const Device& device);

// The tutorial's `cuda if available else cpu` in one call.
Device best_device();

}  // namespace ember

template <>
struct std::hash<ember::Device> {
  size_t operator()(const ember::Device& d) const noexcept {
    return std::hash<int>()(static_cast<int>(d.type()) * 1024 + d.index());
  }
};
