// tests/internal/test_cpu_isa.cpp: the instruction-set level of the CPU kernels -- EMBER_CPU_ISA
// caps the detected level, a bad value is an Error naming it, and the level in force is the one
// get_cpu_capability() reports.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "backend/cpu/cpu_isa.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::cpu {
namespace {

// Sets EMBER_CPU_ISA for one scope and restores what was there.
class IsaEnv {
 public:
  explicit IsaEnv(const char* value) {
    if (const char* old = std::getenv("EMBER_CPU_ISA")) saved_ = old;
    setenv("EMBER_CPU_ISA", value, 1);
  }
  ~IsaEnv() {
    if (saved_)
      setenv("EMBER_CPU_ISA", saved_->c_str(), 1);
    else
      unsetenv("EMBER_CPU_ISA");
  }

 private:
  std::optional<std::string> saved_;
};

CpuIsa resolve_with(const char* value) {
  IsaEnv env(value);
  return detail::resolve_isa();
}

TEST(CpuIsa, TheVariableCapsTheDetectedLevel) {
  const CpuIsa best = detected_isa();
  EXPECT_EQ(resolve_with("baseline"), CpuIsa::kBaseline);
  EXPECT_EQ(resolve_with("avx2"), std::min(best, CpuIsa::kAvx2));
  EXPECT_EQ(resolve_with("avx512"), std::min(best, CpuIsa::kAvx512));
  EXPECT_EQ(resolve_with("avx512_bf16"), std::min(best, CpuIsa::kAvx512Bf16));
  EXPECT_EQ(resolve_with("amx"), best);
  EXPECT_EQ(resolve_with(""), best);
}

TEST(CpuIsa, OtherValuesAreAnErrorThatSaysWhatToSet) {
  for (const char* bad : {"sse2", "AVX2", "avx-512", "2", "avx512bf16", "amx_bf16"}) {
    try {
      resolve_with(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(std::string("EMBER_CPU_ISA='") + bad + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("amx, avx512_bf16, avx512, avx2 or baseline"), std::string::npos) << what;
    }
  }
}

TEST(CpuIsa, TheLevelInForceIsTheOneReported) {
  EXPECT_EQ(cpu_isa(), detail::resolve_isa());
  EXPECT_EQ(get_cpu_capability(), isa_name(cpu_isa()));
  // Under a cap the suite runs what a CPU of that level would (CI runs it so at every level).
  if (const char* cap = std::getenv("EMBER_CPU_ISA"); cap && *cap) {
    for (CpuIsa isa : kAllCpuIsas) {
      if (isa_name(isa) == cap && isa <= detected_isa()) {
        EXPECT_EQ(get_cpu_capability(), cap);
      }
    }
  }
}

// .ci/run runs this binary under qemu-x86_64 -cpu Haswell (AVX2 and FMA, no AVX-512) with
// EMBER_EXPECT_DETECTED_ISA=avx2: detection itself, not only the cap, must then say avx2.
TEST(CpuIsa, DetectionMatchesTheCpuWhenTold) {
  const char* expect = std::getenv("EMBER_EXPECT_DETECTED_ISA");
  if (expect == nullptr) GTEST_SKIP() << "EMBER_EXPECT_DETECTED_ISA is not set";
  EXPECT_EQ(isa_name(detected_isa()), expect);
}

TEST(CpuIsa, LevelsHaveTheVariablesNames) {
  EXPECT_EQ(isa_name(CpuIsa::kAmx), "amx");
  EXPECT_EQ(isa_name(CpuIsa::kAvx512Bf16), "avx512_bf16");
  EXPECT_EQ(isa_name(CpuIsa::kAvx512), "avx512");
  EXPECT_EQ(isa_name(CpuIsa::kAvx2), "avx2");
  EXPECT_EQ(isa_name(CpuIsa::kBaseline), "baseline");
}

}  // namespace
}  // namespace ember::cpu
