// core/matmul_precision.cpp: set_float32_matmul_precision / get_float32_matmul_precision and
// set_bf16_matmul_reduced_precision_reduction, atomic settings for the whole process (as
// PyTorch's).
#include "core/matmul_precision.h"

#include <array>
#include <atomic>
#include <string>

#include "ember/error.h"
#include "ember/settings.h"

namespace ember {

namespace {
constexpr std::array<const char*, 3> kNames = {"highest", "high", "medium"};
std::atomic<MatmulPrecision> g_precision{MatmulPrecision::Highest};
std::atomic<bool> g_bf16_reduced{true};
}  // namespace

MatmulPrecision float32_matmul_precision() {
  return g_precision.load(std::memory_order_relaxed);
}

void set_float32_matmul_precision(const std::string& precision) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (precision == kNames[i]) {
      g_precision.store(static_cast<MatmulPrecision>(i), std::memory_order_relaxed);
      return;
    }
  }
  EMBER_THROW(Value, "[set_float32_matmul_precision] invalid precision '", precision,
              "'; expected one of \"highest\", \"high\" or \"medium\"");
}

std::string get_float32_matmul_precision() {
  return kNames[static_cast<size_t>(float32_matmul_precision())];
}

void set_bf16_matmul_reduced_precision_reduction(bool allow) {
  g_bf16_reduced.store(allow, std::memory_order_relaxed);
}

bool get_bf16_matmul_reduced_precision_reduction() {
  return g_bf16_reduced.load(std::memory_order_relaxed);
}

}  // namespace ember
