// ember_cuda_emu/device.h: the CUDA execution model of the emulated device, for kernel sources
// compiled as host C++ -- the qualifiers, dim3 and the built-in indices, __syncthreads and
// __syncwarp, warp shuffles and votes, atomics, and the launch EMBER_CUDA_LAUNCH expands to.
//
// A launch runs its blocks one after another on the calling thread; a block's threads are fibers
// (scheduler.cpp), each switching out only at a barrier or a warp operation. A barrier that only
// some of a block's threads reach, lanes that meet at different warp operations, a mask that leaves
// out its own lane or names lanes that never arrive, and a launch configuration the hardware
// refuses are kernel faults: the launch's cudaGetLastError() then names the kernel, the source line
// and what went wrong.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember_cuda_emu/half_types.h"
#include "ember_cuda_emu/runtime.h"

// The architecture the emulated device stands for (an H100 / H200): code that chooses a path by
// architecture takes the one nvcc compiles for sm_90.
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 900
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
// Per-block shared memory: the blocks of a launch run in turn on one host thread, whose fibers are
// that block's threads, so a thread_local static is exactly one block's copy.
#define __shared__ static thread_local

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x, y, z;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) float2 {
  float x, y;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
  return {x, y, z, w};
}
inline float4 make_float4(float x, float y, float z, float w) {
  return {x, y, z, w};
}

// CUDA's min and max of mixed integer and floating operands.
template <class A, class B>
constexpr std::common_type_t<A, B> min(A a, B b) {
  return b < a ? b : a;
}
template <class A, class B>
constexpr std::common_type_t<A, B> max(A a, B b) {
  return a < b ? b : a;
}

// Correctly rounded arithmetic: plain operations (the emulator compiles without FP contraction).
inline float __fmul_rn(float a, float b) {
  return a * b;
}
inline float __fadd_rn(float a, float b) {
  return a + b;
}
inline double __dmul_rn(double a, double b) {
  return a * b;
}
inline double __dadd_rn(double a, double b) {
  return a + b;
}

namespace ember_cuda_emu {

struct ThreadState {
  uint3 idx{};
  int linear = 0;
  int lane = 0;
  int warp = 0;
};
struct BlockState {
  uint3 idx{};
  dim3 dim;
  dim3 grid;
  unsigned char* dynamic_shared = nullptr;
  size_t dynamic_shared_bytes = 0;
};

extern thread_local ThreadState* tls_thread;
extern thread_local BlockState* tls_block;

// A kernel fault found in device code: ends the launch with an error naming `where`.
[[noreturn]] void kernel_fault(const std::string& what, const std::source_location& where);

// The values the lanes of one warp operation gave (16 bytes each), once all of them arrived.
struct WarpValues {
  unsigned mask = 0;
  unsigned char bytes[32][16];
  // What the first lane computed for the whole warp (wmma::mma_sync: every lane has the same
  // fragments, so one product serves all 32).
  mutable std::vector<float> shared_result;
};
enum class WarpOp { Syncwarp, Shfl, Vote, Wmma };
// Blocks the calling lane until every lane of `mask` reached a warp operation of this mask, then
// returns what each gave. Faults for a mask without the caller's lane, lanes that meet at
// different operations, and lanes of the mask that exit or wait elsewhere.
std::shared_ptr<const WarpValues> warp_collective(WarpOp op, unsigned mask, const void* value,
                                                  size_t bytes, const std::source_location& where);
void block_barrier(const std::source_location& where);

inline unsigned char* dynamic_shared() {
  return tls_block->dynamic_shared;
}

// Where and how a kernel is launched (EMBER_CUDA_LAUNCH's arguments).
struct LaunchSite {
  dim3 grid, block;
  size_t shared_bytes;
  cudaStream_t stream;
  const char* kernel_name;
  const char* file;
  int line;
  LaunchSite(dim3 g, dim3 b, size_t smem, cudaStream_t s, const char* name, const char* f, int l)
      : grid(g), block(b), shared_bytes(smem), stream(s), kernel_name(name), file(f), line(l) {}
};

// Checks the configuration and the pointer arguments, then runs (or, while the stream is being
// captured, records) `per_thread` on every thread of the grid. Errors land in cudaGetLastError.
void submit_kernel(const LaunchSite& site, const void* kernel, std::function<void()> per_thread,
                   const std::vector<std::pair<int, const void*>>& pointer_args);

// EMBER_CUDA_LAUNCH's launch: `call` calls the kernel with a thread's copy of the arguments;
// `kernel` is its address, or null where the launch's name leaves template arguments to the call.
template <class Call>
class Launch {
 public:
  Launch(const LaunchSite& site, Call call, const void* kernel)
      : site_(site), call_(call), kernel_(kernel) {}
  template <class... A>
  void operator()(A&&... args) const {
    auto params = std::make_shared<std::tuple<std::decay_t<A>...>>(std::forward<A>(args)...);
    std::vector<std::pair<int, const void*>> pointers;
    collect_pointers(*params, pointers, std::index_sequence_for<A...>{});
    Call call = call_;
    submit_kernel(
        site_, kernel_,
        [call, params] { std::apply(call, *params); },  // the kernel copies its parameters
        pointers);
  }

 private:
  template <class Tuple, size_t... I>
  static void collect_pointers(const Tuple& t, std::vector<std::pair<int, const void*>>& out,
                               std::index_sequence<I...>) {
    (
        [&] {
          using T = std::tuple_element_t<I, Tuple>;
          if constexpr (std::is_pointer_v<T>)
            out.emplace_back(static_cast<int>(I), static_cast<const void*>(std::get<I>(t)));
        }(),
        ...);
  }

  LaunchSite site_;
  Call call_;
  const void* kernel_;
};

template <class T>
T warp_read(const WarpValues& v, int lane) {
  T r;
  std::memcpy(&r, v.bytes[lane], sizeof(T));
  return r;
}

// The lane a shuffle reads (`from`), checked against the mask.
template <class T>
T shuffle_result(const WarpValues& v, int from, const std::source_location& where) {
  if (!(v.mask >> from & 1u))
    kernel_fault("a shuffle of lane " + std::to_string(tls_thread->lane) + " reads lane " +
                     std::to_string(from) + ", which its mask leaves out",
                 where);
  return warp_read<T>(v, from);
}

}  // namespace ember_cuda_emu

#define threadIdx (::ember_cuda_emu::tls_thread->idx)
#define blockIdx (::ember_cuda_emu::tls_block->idx)
#define blockDim (::ember_cuda_emu::tls_block->dim)
#define gridDim (::ember_cuda_emu::tls_block->grid)
inline constexpr int warpSize = 32;

inline void __syncthreads(std::source_location where = std::source_location::current()) {
  ember_cuda_emu::block_barrier(where);
}
inline void __syncwarp(unsigned mask = 0xffffffffu,
                       std::source_location where = std::source_location::current()) {
  ember_cuda_emu::warp_collective(ember_cuda_emu::WarpOp::Syncwarp, mask, nullptr, 0, where);
}

namespace ember_cuda_emu {
// A shuffle: every lane of `mask` gives `var`; the caller reads lane from(lane, base), where base
// is the first lane of its `width`-lane segment.
template <class T, class From>
T shuffle(unsigned mask, T var, int width, const std::source_location& where, From from) {
  auto v = warp_collective(WarpOp::Shfl, mask, &var, sizeof(T), where);
  const int lane = tls_thread->lane;
  return shuffle_result<T>(*v, from(lane, lane & ~(width - 1)), where);
}
}  // namespace ember_cuda_emu

template <class T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32,
              std::source_location where = std::source_location::current()) {
  return ember_cuda_emu::shuffle(mask, var, width, where,
                                 [&](int, int base) { return base + (src_lane & (width - 1)); });
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32,
                  std::source_location where = std::source_location::current()) {
  return ember_cuda_emu::shuffle(mask, var, width, where, [&](int lane, int base) {
    const int from = lane ^ lane_mask;
    return from >= base + width ? lane : from;
  });
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32,
                   std::source_location where = std::source_location::current()) {
  return ember_cuda_emu::shuffle(mask, var, width, where, [&](int lane, int base) {
    const int from = lane + static_cast<int>(delta);
    return from >= base + width ? lane : from;
  });
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32,
                 std::source_location where = std::source_location::current()) {
  return ember_cuda_emu::shuffle(mask, var, width, where, [&](int lane, int base) {
    const int from = lane - static_cast<int>(delta);
    return from < base ? lane : from;
  });
}

inline unsigned __ballot_sync(unsigned mask, int predicate,
                              std::source_location where = std::source_location::current()) {
  int p = predicate != 0;
  auto v =
      ember_cuda_emu::warp_collective(ember_cuda_emu::WarpOp::Vote, mask, &p, sizeof(p), where);
  unsigned r = 0;
  for (int l = 0; l < 32; ++l)
    if ((v->mask >> l & 1u) && ember_cuda_emu::warp_read<int>(*v, l)) r |= 1u << l;
  return r;
}
inline int __any_sync(unsigned mask, int predicate,
                      std::source_location where = std::source_location::current()) {
  return __ballot_sync(mask, predicate, where) != 0;
}
inline int __all_sync(unsigned mask, int predicate,
                      std::source_location where = std::source_location::current()) {
  return __ballot_sync(mask, predicate, where) == mask;
}

#include "ember_cuda_emu/atomics.h"
