// backend/cpu/cpu_random.cpp: uniform, normal and integer random fills from Philox counters.
#include <cmath>
#include <numbers>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"
#include "kernels/philox.h"

namespace ember {

namespace {

// Four float draws (or two double draws) per Philox call; normals by Box-Muller in pairs.
template <class T>
void fill_random(RandomKind kind, T* out, int64_t n, uint64_t seed, uint64_t counter, double a,
                 double b) {
  constexpr int per_call = philox::kUniformsPerCall<T>;
  int64_t calls = (n + per_call - 1) / per_call;
  cpu::parallel_for(calls, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      philox::Uint4 r = philox::philox4x32(counter + c, seed);
      T u[per_call];
      philox::uniforms<T>(r, u);
      T v[per_call];
      if (kind == RandomKind::Normal) {
        for (int i = 0; i < per_call; i += 2) {
          T radius = std::sqrt(T(-2) * std::log(T(1) - u[i]));  // 1 - u is in (0, 1]
          T theta = T(2 * std::numbers::pi) * u[i + 1];
          v[i] = static_cast<T>(a + b * radius * std::cos(theta));
          v[i + 1] = static_cast<T>(a + b * radius * std::sin(theta));
        }
      } else {
        for (int i = 0; i < per_call; ++i) {
          v[i] = static_cast<T>(a + (b - a) * u[i]);
          if (v[i] >= static_cast<T>(b))
            v[i] = std::nextafter(static_cast<T>(b), static_cast<T>(a));
        }
      }
      for (int i = 0; i < per_call && c * per_call + i < n; ++i) out[c * per_call + i] = v[i];
    }
  });
}

}  // namespace

void CpuBackend::random(RandomKind kind, const View& dst, uint64_t seed, uint64_t counter, double a,
                        double b) {
  int64_t n = dst.numel();
  if (kind == RandomKind::RandInt) {
    uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(b) - static_cast<int64_t>(a));
    int64_t low = static_cast<int64_t>(a);
    visit_dtype(dst.dtype, [&]<class T>() {
      T* out = static_cast<T*>(dst.data);
      cpu::parallel_for(n, 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          philox::Uint4 r = philox::philox4x32(counter + i, seed);
          uint64_t bits = static_cast<uint64_t>(r.x) << 32 | r.y;
          out[i] = static_cast<T>(low + static_cast<int64_t>(bits % range));
        }
      });
    });
    return;
  }
  check_float32_or_64(dst.dtype, "random");
  if (dst.dtype == kFloat32)
    fill_random(kind, static_cast<float*>(dst.data), n, seed, counter, a, b);
  else
    fill_random(kind, static_cast<double*>(dst.data), n, seed, counter, a, b);
}

}  // namespace ember
