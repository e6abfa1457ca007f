// backend/cpu/cpu_isa.cpp: detecting the CPU's instruction-set level and reading EMBER_CPU_ISA.
#include "backend/cpu/cpu_isa.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ember/error.h"

namespace ember::cpu {

std::string_view isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kBaseline:
      break;
  }
  return "baseline";
}

CpuIsa detected_isa() {
#if defined(EMBER_HAVE_ISA_CLONES)
  // The x86-64-v4 / -v3 feature sets, as the compiler targets them; libgcc also checks that the OS
  // saves the AVX and AVX-512 registers (XCR0).
  if (__builtin_cpu_supports("x86-64-v4")) return CpuIsa::kAvx512;
  if (__builtin_cpu_supports("x86-64-v3")) return CpuIsa::kAvx2;
#endif
  return CpuIsa::kBaseline;
}

namespace detail {

CpuIsa resolve_isa() {
  CpuIsa best = detected_isa();
  const char* env = std::getenv("EMBER_CPU_ISA");
  if (env == nullptr || *env == '\0') return best;
  std::string value(env);
  for (CpuIsa isa : {CpuIsa::kAvx512, CpuIsa::kAvx2, CpuIsa::kBaseline})
    if (value == isa_name(isa)) return std::min(best, isa);
  EMBER_CHECK_KIND(Value, false, "[cpu] EMBER_CPU_ISA='", value,
                   "' is not an instruction-set level: use avx512, avx2 or baseline (or unset it "
                   "for the best level this CPU supports)");
  return best;
}

}  // namespace detail

}  // namespace ember::cpu
