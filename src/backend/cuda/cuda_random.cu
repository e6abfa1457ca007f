// backend/cuda/cuda_random.cu: uniform, normal and integer random fills from the same Philox
// counters as the CPU (kernels/philox.h, backend/cpu/cpu_random.cpp): one thread per counter, the
// CPU's order of operations with explicitly rounded double arithmetic (no fused multiply-add), so
// uniform and integer draws are bit-identical to the CPU's. Normal draws go through the GPU's
// log/sin/cos, which may differ from the host's in the last bits.
#include <cmath>
#include <numbers>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/philox.h"

namespace ember::cuda_detail {

namespace {

__device__ inline float mul_rn(float x, float y) {
  return __fmul_rn(x, y);
}
__device__ inline double mul_rn(double x, double y) {
  return __dmul_rn(x, y);
}

template <class T>
__global__ void random_real(T* out, int64_t n, int64_t calls, uint64_t seed, uint64_t counter,
                            double a, double b, bool normal) {
  constexpr int per_call = philox::kUniformsPerCall<T>;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < calls;
       c += stride) {
    philox::Uint4 r = philox::philox4x32(counter + c, seed);
    T u[per_call];
    philox::uniforms<T>(r, u);
    T v[per_call];
    if (normal) {
#pragma unroll
      for (int i = 0; i < per_call; i += 2) {
        T radius = std::sqrt(mul_rn(T(-2), std::log(T(1) - u[i])));
        T theta = mul_rn(static_cast<T>(2 * std::numbers::pi), u[i + 1]);
        double scaled = __dmul_rn(b, static_cast<double>(radius));
        v[i] =
            static_cast<T>(__dadd_rn(a, __dmul_rn(scaled, static_cast<double>(std::cos(theta)))));
        v[i + 1] =
            static_cast<T>(__dadd_rn(a, __dmul_rn(scaled, static_cast<double>(std::sin(theta)))));
      }
    } else {
#pragma unroll
      for (int i = 0; i < per_call; ++i) {
        v[i] = static_cast<T>(__dadd_rn(a, __dmul_rn(b - a, static_cast<double>(u[i]))));
        if (v[i] >= static_cast<T>(b)) v[i] = std::nextafter(static_cast<T>(b), static_cast<T>(a));
      }
    }
#pragma unroll
    for (int i = 0; i < per_call; ++i)
      if (c * per_call + i < n) out[c * per_call + i] = v[i];
  }
}

template <class T>
__global__ void random_int(T* out, int64_t n, uint64_t seed, uint64_t counter, int64_t low,
                           uint64_t range) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    philox::Uint4 r = philox::philox4x32(counter + i, seed);
    uint64_t bits = static_cast<uint64_t>(r.x) << 32 | r.y;
    out[i] = static_cast<T>(low + static_cast<int64_t>(bits % range));
  }
}

}  // namespace

void launch_random(RandomKind kind, const View& dst, uint64_t seed, uint64_t counter, double a,
                   double b) {
  int64_t n = dst.numel();
  if (n == 0) return;
  cudaStream_t stream = current_stream();
  if (kind == RandomKind::RandInt) {
    uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(b) - static_cast<int64_t>(a));
    EMBER_CHECK_KIND(Value, range > 0, "[randint] cuda: empty range [", a, ", ", b, ")");
    visit_dtype(dst.dtype, [&]<class T>() {
      EMBER_CUDA_LAUNCH(blocks_for(n), kThreads, 0, stream, random_int<T>)
      (static_cast<T*>(dst.data), n, seed, counter, static_cast<int64_t>(a), range);
      EMBER_CUDA_CHECK_LAUNCH("randint kernel");
    });
    return;
  }
  check_float32_or_64(dst.dtype, "random");
  bool normal = kind == RandomKind::Normal;
  if (dst.dtype == kFloat32) {
    int64_t calls = (n + 3) / 4;
    EMBER_CUDA_LAUNCH(blocks_for(calls), kThreads, 0, stream, random_real<float>)
    (static_cast<float*>(dst.data), n, calls, seed, counter, a, b, normal);
  } else {
    int64_t calls = (n + 1) / 2;
    EMBER_CUDA_LAUNCH(blocks_for(calls), kThreads, 0, stream, random_real<double>)
    (static_cast<double*>(dst.data), n, calls, seed, counter, a, b, normal);
  }
  EMBER_CUDA_CHECK_LAUNCH("random kernel");
}

}  // namespace ember::cuda_detail
