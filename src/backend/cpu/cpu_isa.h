// backend/cpu/cpu_isa.h: the x86 instruction-set level the CPU kernels run at, and clones of a
// kernel per level dispatched by it.
//
// The level is the best this CPU (and its OS) supports -- AMX-BF16 tiles (amx: AVX-512 with
// AVX512-BF16 and AMX-TILE/AMX-BF16, the OS granting the tile state), AVX512-BF16 (avx512_bf16:
// x86-64-v4 with vdpbf16ps), AVX-512 (x86-64-v4), AVX2 + FMA (x86-64-v3) or the x86-64 baseline --
// capped by the environment variable EMBER_CPU_ISA (amx|avx512_bf16|avx512|avx2|baseline, in the
// spirit of oneDNN's ONEDNN_MAX_CPU_ISA), read once. Every run-time choice of a CPU kernel goes
// through cpu_isa(), so a cap runs an AMX machine's kernels exactly as an AVX-512, AVX2 or a
// baseline machine would. The two levels above avx512 differ from it only in the bfloat16 GEMM
// (cpu_gemm_bf16.h); every other kernel runs its AVX-512 clone there.
#pragma once

#include <string_view>

namespace ember::cpu {

enum class CpuIsa : int { kBaseline = 0, kAvx2 = 1, kAvx512 = 2, kAvx512Bf16 = 3, kAmx = 4 };

// Every level, lowest first.
inline constexpr CpuIsa kAllCpuIsas[] = {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512,
                                         CpuIsa::kAvx512Bf16, CpuIsa::kAmx};

// The name EMBER_CPU_ISA uses for a level: "baseline", "avx2", "avx512", "avx512_bf16" or "amx".
std::string_view isa_name(CpuIsa isa);
// The best level this CPU supports, ignoring EMBER_CPU_ISA. On Linux, amx needs the process's
// permission to use the tile data (arch_prctl ARCH_REQ_XCOMP_PERM, requested here once): when the
// kernel refuses it the level is avx512_bf16.
CpuIsa detected_isa();

namespace detail {
// min(detected_isa(), EMBER_CPU_ISA); throws an Error naming the variable for any other value.
CpuIsa resolve_isa();
}  // namespace detail

// The level the kernels run at, fixed at the first call (the CPU backend makes that call before
// any kernel runs, outside parallel regions, so a bad EMBER_CPU_ISA surfaces as an Error there).
inline CpuIsa cpu_isa() {
  static const CpuIsa isa = detail::resolve_isa();
  return isa;
}

// Kernel, a function marked [[gnu::always_inline]], compiled once per level: the AVX-512 clone
// with x86-64-v4 code generation (512-bit vectors in files built with -mprefer-vector-width=512,
// see src/CMakeLists.txt), the AVX2 one with x86-64-v3, the baseline one plain. call() runs the
// clone of cpu_isa(). The library is built with -ffp-contract=off, so the clones of an
// element-wise kernel give the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EMBER_TARGET_AVX512 [[gnu::target("arch=x86-64-v4")]]
#define EMBER_TARGET_AVX2 [[gnu::target("arch=x86-64-v3")]]
#define EMBER_HAVE_ISA_CLONES 1
#endif

template <auto Kernel, class Sig = decltype(Kernel)>
struct IsaClones;

template <auto Kernel, class R, class... A>
struct IsaClones<Kernel, R (*)(A...)> {
#if defined(EMBER_HAVE_ISA_CLONES)
  EMBER_TARGET_AVX512 static R avx512(A... a) {
    return Kernel(a...);
  }
  EMBER_TARGET_AVX2 static R avx2(A... a) {
    return Kernel(a...);
  }
#endif
  static R baseline(A... a) {
    return Kernel(a...);
  }
  static R call(A... a) {
#if defined(EMBER_HAVE_ISA_CLONES)
    switch (cpu_isa()) {
      case CpuIsa::kAmx:
      case CpuIsa::kAvx512Bf16:
      case CpuIsa::kAvx512:
        return avx512(a...);
      case CpuIsa::kAvx2:
        return avx2(a...);
      case CpuIsa::kBaseline:
        break;
    }
#endif
    return baseline(a...);
  }
};

// Runs the clone of Kernel for cpu_isa().
template <auto Kernel, class... Args>
inline decltype(auto) isa_dispatch(Args&&... args) {
  return IsaClones<Kernel>::call(static_cast<Args&&>(args)...);
}

}  // namespace ember::cpu
