// tests/fake_cuda_backend.h: the stand-in "cuda" backend of the test programs -- two devices on
// host memory (the CPU backend's kernels) -- registered where no real GPU is present, so every
// cross-device path runs on any machine.
#pragma once

#include <string>

#include "backend/cpu/cpu_backend.h"
#include "ember/cuda.h"

namespace ember::testing {

class FakeCudaBackend : public CpuBackend {
 public:
  int device_count() override { return 2; }
  std::string device_name(int index) override { return "Fake GPU " + std::to_string(index); }
};

// Registers the stand-in as the "cuda" backend unless a GPU is there; true when it did.
inline bool register_fake_cuda_backend() {
  static FakeCudaBackend fake;
  if (cuda::is_available()) return false;
  register_backend(kCUDA, &fake);
  return true;
}

}  // namespace ember::testing
