// kernels/philox.h: the Philox 4x32-10 counter-based generator (Salmon et al., SC'11), host and
// device. Element i of a random op draws from counter (offset + i / per_call), so any thread or
// GPU block can compute its own numbers and results do not depend on how work is split.
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/dtype.h"
#include "kernels/op_params.h"
#include "kernels/scalar_math.h"

namespace ember::philox {

struct Uint4 {
  uint32_t x, y, z, w;
};

EMBER_HOST_DEVICE inline Uint4 philox4x32(uint64_t counter, uint64_t key) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}

// Uniform in [0, 1) from 24 (float) or 53 (double) random bits.
EMBER_HOST_DEVICE inline float uniform_float(uint32_t r) {
  return static_cast<float>(r >> 8) * (1.0f / 16777216.0f);
}
EMBER_HOST_DEVICE inline double uniform_double(uint32_t hi, uint32_t lo) {
  uint64_t bits = (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

// The uniforms in [0, 1) one Philox call gives: four float32 or two float64 (two words each).
template <class T>
inline constexpr int kUniformsPerCall = sizeof(T) == 4 ? 4 : 2;

template <class T>
EMBER_HOST_DEVICE inline void uniforms(const Uint4& r, T (&u)[kUniformsPerCall<T>]) {
  if constexpr (kUniformsPerCall<T> == 4) {
    u[0] = uniform_float(r.x);
    u[1] = uniform_float(r.y);
    u[2] = uniform_float(r.z);
    u[3] = uniform_float(r.w);
  } else {
    u[0] = static_cast<T>(uniform_double(r.x, r.y));
    u[1] = static_cast<T>(uniform_double(r.z, r.w));
  }
}

}  // namespace ember::philox
