// ember/autocast.h: mixed precision as torch.autocast -- a scope in which the ops of one device
// type pick their own precision: matmul, mm, bmm, linear and conv2d compute float32 inputs in a
// 16-bit dtype (float16 or bfloat16), and exp, log, pow, softmax, log_softmax, logsumexp,
// layer_norm, sum, prod and the losses compute 16-bit inputs in float32. Other ops take their
// inputs' dtypes (binary ops promote to the widest). float64 is never changed. The state is per
// thread and per device type, scopes nest, and backward passes run with autocast off (their ops
// follow the dtypes the forward pass chose).
//
//   {
//     ember::autocast ac(ember::kCUDA, ember::kBFloat16);
//     Tensor loss = F::cross_entropy(model(x), y);  // model's matmuls in bfloat16, loss float32
//   }
//   loss.backward();
#pragma once

#include <optional>

#include "ember/device.h"
#include "ember/dtype.h"

namespace ember {

// While alive, autocast is `enabled` for ops on tensors of `device_type`, with `dtype` (default:
// float16 for CUDA, bfloat16 for CPU, as PyTorch's) as the lower precision. The previous state
// comes back on destruction.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device_type, std::optional<DType> dtype = std::nullopt,
                         bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_type_;
  bool previous_enabled_;
  DType previous_dtype_;
};
// torch.autocast's name.
using autocast = AutocastGuard;

// torch.is_autocast_enabled(device_type) and torch.get_autocast_dtype(device_type).
bool is_autocast_enabled(DeviceType device_type);
DType get_autocast_dtype(DeviceType device_type);

namespace autocast_detail {
// The lower-precision dtype ops on `device_type` use now: set while autocast is enabled there and
// not suspended.
std::optional<DType> active_dtype(DeviceType device_type);
// Suspends autocast on this thread while alive (backward passes, and ops that already chose
// their precision and compute through other ops).
class Suspend {
 public:
  Suspend();
  ~Suspend();
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;

 private:
  bool previous_;
};
}  // namespace autocast_detail

}  // namespace ember
