// ember_cuda_emu/atomics.h: CUDA's atomic functions on global and shared memory for the types the
// kernels use, as host atomics (std::atomic_ref), so that launches from several host threads at
// once stay correct too.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>

#include "ember_cuda_emu/half_types.h"

namespace ember_cuda_emu {

template <class T>
T atomic_add(T* address, T v) {
  return std::atomic_ref<T>(*address).fetch_add(v);
}

// A 16-bit floating add as a compare-and-swap loop on its bits.
template <class H>
H atomic_add_16(H* address, H v) {
  std::atomic_ref<uint16_t> word(address->__x);
  uint16_t old = word.load();
  for (;;) {
    H cur;
    cur.__x = old;
    H next(static_cast<float>(cur) + static_cast<float>(v));
    if (word.compare_exchange_weak(old, next.__x)) return cur;
  }
}

template <class T>
T atomic_cas(T* address, T compare, T value) {
  std::atomic_ref<T>(*address).compare_exchange_strong(compare, value);
  return compare;  // the old value either way
}

}  // namespace ember_cuda_emu

inline float atomicAdd(float* a, float v) {
  return ember_cuda_emu::atomic_add(a, v);
}
inline double atomicAdd(double* a, double v) {
  return ember_cuda_emu::atomic_add(a, v);
}
inline int atomicAdd(int* a, int v) {
  return ember_cuda_emu::atomic_add(a, v);
}
inline unsigned atomicAdd(unsigned* a, unsigned v) {
  return ember_cuda_emu::atomic_add(a, v);
}
inline unsigned long long atomicAdd(unsigned long long* a, unsigned long long v) {
  return ember_cuda_emu::atomic_add(a, v);
}
inline __half atomicAdd(__half* a, __half v) {
  return ember_cuda_emu::atomic_add_16(a, v);
}
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* a, __nv_bfloat16 v) {
  return ember_cuda_emu::atomic_add_16(a, v);
}

inline unsigned short atomicCAS(unsigned short* a, unsigned short compare, unsigned short value) {
  return ember_cuda_emu::atomic_cas(a, compare, value);
}
inline unsigned atomicCAS(unsigned* a, unsigned compare, unsigned value) {
  return ember_cuda_emu::atomic_cas(a, compare, value);
}
inline int atomicCAS(int* a, int compare, int value) {
  return ember_cuda_emu::atomic_cas(a, compare, value);
}
inline unsigned long long atomicCAS(unsigned long long* a, unsigned long long compare,
                                    unsigned long long value) {
  return ember_cuda_emu::atomic_cas(a, compare, value);
}

inline int atomicMax(int* a, int v) {
  std::atomic_ref<int> r(*a);
  int old = r.load();
  while (old < v && !r.compare_exchange_weak(old, v)) {
  }
  return old;
}
inline int atomicMin(int* a, int v) {
  std::atomic_ref<int> r(*a);
  int old = r.load();
  while (v < old && !r.compare_exchange_weak(old, v)) {
  }
  return old;
}
inline unsigned atomicExch(unsigned* a, unsigned v) {
  return std::atomic_ref<unsigned>(*a).exchange(v);
}
