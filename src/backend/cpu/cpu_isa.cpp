// backend/cpu/cpu_isa.cpp: detecting the CPU's instruction-set level and reading EMBER_CPU_ISA.
#include "backend/cpu/cpu_isa.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "ember/error.h"

namespace ember::cpu {

std::string_view isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAmx:
      return "amx";
    case CpuIsa::kAvx512Bf16:
      return "avx512_bf16";
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kBaseline:
      break;
  }
  return "baseline";
}

namespace {

#if defined(EMBER_HAVE_ISA_CLONES) && defined(__linux__)
// CPUID leaf 7: subleaf 0 EDX bit 22 AMX-BF16 and bit 24 AMX-TILE; subleaf 1 EAX bit 5
// AVX512-BF16.
bool cpuid_bit(unsigned subleaf, int reg, int bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(7, subleaf, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg] >> bit) & 1u;
}

// The OS saves the tile configuration and data (XCR0 bits 17 and 18), and grants this process
// the tile data: Linux 5.16+ asks for it with arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA).
bool amx_usable() {
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & (3u << 17)) != (3u << 17)) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#endif

}  // namespace

CpuIsa detected_isa() {
#if defined(EMBER_HAVE_ISA_CLONES)
  // The x86-64-v4 / -v3 feature sets, as the compiler targets them; libgcc also checks that the OS
  // saves the AVX and AVX-512 registers (XCR0).
  if (__builtin_cpu_supports("x86-64-v4")) {
#if defined(__linux__)
    if (!cpuid_bit(1, 0, 5)) return CpuIsa::kAvx512;
    static const bool amx = cpuid_bit(0, 3, 22) && cpuid_bit(0, 3, 24) && amx_usable();
    return amx ? CpuIsa::kAmx : CpuIsa::kAvx512Bf16;
#else
    return CpuIsa::kAvx512;
#endif
  }
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
  for (CpuIsa isa : kAllCpuIsas)
    if (value == isa_name(isa)) return std::min(best, isa);
  EMBER_CHECK_KIND(Value, false, "[cpu] EMBER_CPU_ISA='", value,
                   "' is not an instruction-set level: use amx, avx512_bf16, avx512, avx2 or "
                   "baseline (or unset it for the best level this CPU supports)");
  return best;
}

}  // namespace detail

}  // namespace ember::cpu
