// ember/storage.h: a block of device memory shared by every view of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "ember/device.h"

namespace ember {

class Storage {
 public:
  // Allocates nbytes on `device` through that device's backend.
  Storage(size_t nbytes, Device device);
  // Wraps memory owned elsewhere; `deleter` runs when the last view goes.
  Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // Bumped by every in-place write, so autograd can tell saved tensors were changed.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  std::function<void(void*)> deleter_;
  uint64_t version_ = 0;
};

}  // namespace ember
