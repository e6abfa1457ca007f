// backend/cpu/cpu_optim.cpp: fused SGD and Adam/AdamW updates -- one pass over each parameter's
// memory, with PyTorch's order of operations.
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/cpu_loops.h"
#include "kernels/optim_update.h"

namespace ember {

namespace {

// Optimizer state decays geometrically where gradients are zero (exp_avg by beta1 = 0.9 each
// step reaches float32's subnormal range after about 800 steps for a dead ReLU unit), and every
// operation on a subnormal costs a microcode assist of ~100 cycles: an MLP epoch on this CPU went
// from 1.3 ms to 6.5 ms per step. The update therefore runs with subnormals flushed to zero (MXCSR
// FTZ and DAZ) on the thread doing it, restored afterwards; values under 1.2e-38 in a step make
// no difference to the parameters.
class FlushSubnormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  FlushSubnormals() : saved_(__builtin_ia32_stmxcsr()) {
    __builtin_ia32_ldmxcsr(saved_ | 0x8040u);
  }
  ~FlushSubnormals() {
    __builtin_ia32_ldmxcsr(saved_);
  }

 private:
  unsigned saved_;
#endif
};

// The element loops, compiled for AVX-512 (512-bit vectors), AVX2 and the baseline (cpu_isa.h)
// and dispatched by cpu_isa(), with the one
// option that decides which memory is touched as a template parameter; without momentum or amsgrad
// they have no control flow and vectorize.
template <bool kMomentum, class T>
[[gnu::always_inline]] inline void sgd_range(const SgdStep& s, const optim_update::SgdCoeffs<T>& c,
                                             T* p, const T* g, T* buf, int64_t b, int64_t e) {
  const SgdStep step = s;
  const optim_update::SgdCoeffs<T> coeffs = c;
  for (int64_t i = b; i < e; ++i)
    optim_update::sgd<kMomentum>(step, coeffs, p[i], g[i],
                                 kMomentum ? buf + i : static_cast<T*>(nullptr));
}

template <bool kAmsgrad, class T>
[[gnu::always_inline]] inline void adam_range(const AdamStep& s,
                                              const optim_update::AdamCoeffs<T>& c, T* p,
                                              const T* g, T* m, T* v, T* vmax, int64_t b,
                                              int64_t e) {
  // Local copies: the loop's float stores could alias a referenced float coefficient, which GCC
  // would then reload and re-test every element.
  const AdamStep step = s;
  const optim_update::AdamCoeffs<T> coeffs = c;
  for (int64_t i = b; i < e; ++i)
    optim_update::adam<kAmsgrad>(step, coeffs, p[i], g[i], m[i], v[i],
                                 kAmsgrad ? vmax + i : static_cast<T*>(nullptr));
}

template <class T>
void sgd(const SgdStep& s, T* p, const T* g, T* buf, int64_t n) {
  const optim_update::SgdCoeffs<T> c(s);
  cpu::parallel_for(n, cpu::kGrainSize, [&](int64_t b, int64_t e) {
    FlushSubnormals flush;
    if (s.momentum != 0)
      cpu::isa_dispatch<&sgd_range<true, T>>(s, c, p, g, buf, b, e);
    else
      cpu::isa_dispatch<&sgd_range<false, T>>(s, c, p, g, buf, b, e);
  });
}

template <class T>
void adam(const AdamStep& s, T* p, const T* g, T* m, T* v, T* vmax, int64_t n) {
  const optim_update::AdamCoeffs<T> c(s);
  cpu::parallel_for(n, cpu::kGrainSize, [&](int64_t b, int64_t e) {
    FlushSubnormals flush;
    if (s.amsgrad)
      cpu::isa_dispatch<&adam_range<true, T>>(s, c, p, g, m, v, vmax, b, e);
    else
      cpu::isa_dispatch<&adam_range<false, T>>(s, c, p, g, m, v, vmax, b, e);
  });
}

// fn.template operator()<T>() for the dtype of a floating parameter (float32 or float64).
template <class F>
void for_param_dtype(DType dtype, F&& fn) {
  check_float32_or_64(dtype, "optimizer step");
  if (dtype == kFloat32)
    fn.template operator()<float>();
  else
    fn.template operator()<double>();
}

template <class T>
T* state_of(std::span<const View> state, size_t i) {
  return i < state.size() ? static_cast<T*>(state[i].data) : nullptr;
}

}  // namespace

void CpuBackend::sgd_step(const SgdStep& s, std::span<const View> params,
                          std::span<const View> grads, std::span<const View> momentum_buffers) {
  for (size_t i = 0; i < params.size(); ++i)
    for_param_dtype(params[i].dtype, [&]<class T>() {
      sgd<T>(s, static_cast<T*>(params[i].data), static_cast<const T*>(grads[i].data),
             state_of<T>(momentum_buffers, i), params[i].numel());
    });
}

void CpuBackend::adam_step(const AdamStep& s, std::span<const View> params,
                           std::span<const View> grads, std::span<const View> exp_avgs,
                           std::span<const View> exp_avg_sqs,
                           std::span<const View> max_exp_avg_sqs) {
  for (size_t i = 0; i < params.size(); ++i)
    for_param_dtype(params[i].dtype, [&]<class T>() {
      adam<T>(s, static_cast<T*>(params[i].data), static_cast<const T*>(grads[i].data),
              state_of<T>(exp_avgs, i), state_of<T>(exp_avg_sqs, i),
              state_of<T>(max_exp_avg_sqs, i), params[i].numel());
    });
}

}  // namespace ember
