// tests/cuda_emu/cuda_emu_main.cpp: the test suite with ember's real CUDA backend on the emulated
// CUDA device (two GPUs). Every kernel fault the emulator found also fails its launch, and so the
// op that launched it; the run fails at the end as well if any was found.
#include <gtest/gtest.h>

#include <cstdio>

#include "ember/cuda.h"

namespace ember_cuda_emu {
int fault_count();
}  // namespace ember_cuda_emu

namespace {

class FaultCheck : public ::testing::Environment {
 public:
  void TearDown() override {
    EXPECT_EQ(ember_cuda_emu::fault_count(), 0)
        << "kernel faults on the emulated CUDA device (each is in its test's output)";
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!ember::cuda::is_available() || ember::cuda::device_count() < 1) {
    std::fprintf(stderr, "the emulated CUDA device is not available\n");
    return 1;
  }
  ::testing::AddGlobalTestEnvironment(new FaultCheck);
  return RUN_ALL_TESTS();
}
