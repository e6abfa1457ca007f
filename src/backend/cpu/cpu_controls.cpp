// backend/cpu/cpu_controls.cpp: the CPU kernels' process-wide controls -- the OpenMP thread
// count, flushing subnormals, and the instruction-set level the kernels run at.
#include <omp.h>

#include <string>

#include "backend/cpu/cpu_isa.h"
#include "core/backend.h"
#include "ember/settings.h"

namespace ember {

void set_num_threads(int n) {
  EMBER_CHECK(n > 0, "[set_num_threads] the number of threads must be positive, got ", n);
  omp_set_num_threads(n);
}

int get_num_threads() {
  return omp_get_max_threads();
}

std::string get_cpu_capability() {
  cpu_backend();  // fixes the level (a bad EMBER_CPU_ISA throws here)
  return std::string(cpu::isa_name(cpu::cpu_isa()));
}

bool set_flush_denormal(bool on) {
#if defined(__x86_64__) || defined(__i386__)
  // MXCSR bits 15 (flush to zero) and 6 (denormals are zero), in this thread and in every
  // OpenMP worker (each thread has its own register).
  auto apply = [on] {
    unsigned csr = __builtin_ia32_stmxcsr();
    csr = on ? (csr | 0x8040u) : (csr & ~0x8040u);
    __builtin_ia32_ldmxcsr(csr);
  };
  apply();
#pragma omp parallel
  apply();
  return true;
#else
  (void)on;
  return false;
#endif
}

}  // namespace ember
