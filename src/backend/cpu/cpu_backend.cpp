// backend/cpu/cpu_backend.cpp: host memory, copies and fills for the CPU backend.
#include "backend/cpu/cpu_backend.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backend/cpu/cpu_half_convert.h"
#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/cpu_loops.h"
#include "core/host_allocator.h"
#include "kernels/scalar_math.h"

namespace ember {

Backend* cpu_backend() {
  static CpuBackend backend;
  // The kernels' instruction-set level is fixed here, before any kernel runs: a bad EMBER_CPU_ISA
  // throws its Error from the first op rather than from inside a parallel loop.
  (void)cpu::cpu_isa();
  return &backend;
}

void* CpuBackend::allocate(size_t nbytes, int) {
  return host_allocate(nbytes);
}

void CpuBackend::deallocate(void* ptr, size_t nbytes, int) {
  host_deallocate(ptr, nbytes);
}

void CpuBackend::copy(const View& dst, const View& src) {
  cpu::StridedOperands<2> it({&dst, &src});
  if (dst.dtype == src.dtype) {
    size_t es = element_size(dst.dtype);
    it.run([es](char** p, const int64_t* s, int64_t n) {
      if (s[0] == static_cast<int64_t>(es) && s[1] == static_cast<int64_t>(es)) {
        std::memcpy(p[0], p[1], n * es);
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], p[1] + i * s[1], es);
      }
    });
    return;
  }
  visit_dtype(dst.dtype, [&]<class To>() {
    visit_dtype(src.dtype, [&]<class From>() {
      it.run([](char** p, const int64_t* s, int64_t n) {
        if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
          To* o = reinterpret_cast<To*>(p[0]);
          const From* a = reinterpret_cast<const From*>(p[1]);
          if constexpr (requires { cpu::convert(o, a, n); })
            cpu::convert(o, a, n);  // float32 <-> float16 / bfloat16, vectorized
          else
            for (int64_t i = 0; i < n; ++i) o[i] = math::cast<To>(a[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<To*>(p[0] + i * s[0]) =
                math::cast<To>(*reinterpret_cast<const From*>(p[1] + i * s[1]));
        }
      });
    });
  });
}

void CpuBackend::copy_from_host(void* dst, const void* src, size_t nbytes, int, bool) {
  std::memcpy(dst, src, nbytes);
}

void CpuBackend::copy_to_host(void* dst, const void* src, size_t nbytes, int, bool) {
  std::memcpy(dst, src, nbytes);
}

void CpuBackend::fill(const View& dst, const Scalar& value) {
  visit_dtype(dst.dtype, [&]<class T>() {
    T v = value.to<T>();
    cpu::StridedOperands<1> it({&dst});
    it.run([v](char** p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T))
        std::fill_n(reinterpret_cast<T*>(p[0]), n, v);
      else
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
    });
  });
}

}  // namespace ember
