// tests/io_test_util.h: a per-test temporary directory and raw file helpers for the io tests.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_util.h"

namespace ember::testing {

// A device-parametrized fixture with a fresh temporary directory per test.
class IoTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    static int counter = 0;
    dir_ = (std::filesystem::temp_directory_path() /
            ("ember_io_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string path(const std::string& name) const {
    return (std::filesystem::path(dir_) / name).string();
  }
  // Writes `bytes` to a file in the directory and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::string p = path(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string dir_;
};

}  // namespace ember::testing
