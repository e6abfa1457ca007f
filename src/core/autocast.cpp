// core/autocast.cpp: the per-thread autocast state of each device type, and its guards.
#include "ember/autocast.h"

#include "ember/error.h"

namespace ember {

namespace {
struct State {
  bool enabled = false;
  DType dtype;
};
// Indexed by DeviceType; PyTorch's defaults.
thread_local State states[3] = {{false, kBFloat16}, {false, kFloat16}, {false, kFloat16}};
thread_local bool suspended = false;

State& state_of(DeviceType t) {
  return states[static_cast<int>(t)];
}
}  // namespace

AutocastGuard::AutocastGuard(DeviceType device_type, std::optional<DType> dtype, bool enabled)
    : device_type_(device_type) {
  State& s = state_of(device_type);
  DType low = dtype.value_or(device_type == kCPU ? kBFloat16 : kFloat16);
  EMBER_CHECK_KIND(DType, is_reduced_float(low), "[autocast] ", device_type_name(device_type),
                   " autocast computes in float16 or bfloat16, got ", low,
                   "; pass ember::kBFloat16 or ember::kFloat16");
  previous_enabled_ = s.enabled;
  previous_dtype_ = s.dtype;
  s.enabled = enabled;
  if (enabled) s.dtype = low;
}

AutocastGuard::~AutocastGuard() {
  State& s = state_of(device_type_);
  s.enabled = previous_enabled_;
  s.dtype = previous_dtype_;
}

bool is_autocast_enabled(DeviceType device_type) {
  return state_of(device_type).enabled;
}

DType get_autocast_dtype(DeviceType device_type) {
  return state_of(device_type).dtype;
}

namespace autocast_detail {

std::optional<DType> active_dtype(DeviceType device_type) {
  const State& s = state_of(device_type);
  if (!s.enabled || suspended) return std::nullopt;
  return s.dtype;
}

Suspend::Suspend() : previous_(suspended) {
  suspended = true;
}
Suspend::~Suspend() {
  suspended = previous_;
}

}  // namespace autocast_detail
}  // namespace ember
