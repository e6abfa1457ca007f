// tests/fake_cuda_main.cpp: runs the suite with a stand-in "cuda" backend (two devices on host
// memory) when no real GPU is present, so every cross-device path is exercised on any machine.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "ember/cuda.h"
#include "test_util.h"

namespace {
class FakeCudaBackend : public ember::CpuBackend {
 public:
  int device_count() override { return 2; }
  std::string device_name(int index) override { return "Fake GPU " + std::to_string(index); }
};
}  // namespace

int main(int argc, char** argv) {
  static FakeCudaBackend fake;
  if (!ember::cuda::is_available()) {
    ember::register_backend(ember::kCUDA, &fake);
    ember::testing::fake_cuda_backend() = true;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
