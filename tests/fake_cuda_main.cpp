// tests/fake_cuda_main.cpp: runs the suite with a stand-in "cuda" backend (two devices on host
// memory) when no real GPU is present, so every cross-device path is exercised on any machine.
#include <gtest/gtest.h>

#include "fake_cuda_backend.h"
#include "test_util.h"

int main(int argc, char** argv) {
  if (ember::testing::register_fake_cuda_backend()) ember::testing::fake_cuda_backend() = true;
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
