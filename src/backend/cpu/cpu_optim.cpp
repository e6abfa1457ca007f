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
[[gnu::always_inline]] inline void sgd_range(const OptimizerStep& s,
                                             const optim_update::SgdCoeffs<T>& c, T* p, const T* g,
                                             T* buf, int64_t b, int64_t e) {
  const OptimizerStep step = s;
  const optim_update::SgdCoeffs<T> coeffs = c;
  for (int64_t i = b; i < e; ++i)
    optim_update::sgd<kMomentum>(step, coeffs, p[i], g[i],
                                 kMomentum ? buf + i : static_cast<T*>(nullptr));
}

template <bool kAmsgrad, class T>
[[gnu::always_inline]] inline void adam_range(const OptimizerStep& s,
                                              const optim_update::AdamCoeffs<T>& c, T* p,
                                              const T* g, T* m, T* v, T* vmax, int64_t b,
                                              int64_t e) {
  // Local copies: the loop's float stores could alias a referenced float coefficient, which GCC
  // would then reload and re-test every element.
  const OptimizerStep step = s;
  const optim_update::AdamCoeffs<T> coeffs = c;
  for (int64_t i = b; i < e; ++i)
    optim_update::adam<kAmsgrad>(step, coeffs, p[i], g[i], m[i], v[i],
                                 kAmsgrad ? vmax + i : static_cast<T*>(nullptr));
}

template <class T>
void sgd(const OptimizerStep& s, T* p, const T* g, T* buf, int64_t n) {
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
void adam(const OptimizerStep& s, T* p, const T* g, T* m, T* v, T* vmax, int64_t n) {
  const optim_update::AdamCoeffs<T> c(s);
  cpu::parallel_for(n, cpu::kGrainSize, [&](int64_t b, int64_t e) {
    FlushSubnormals flush;
    if (s.amsgrad)
      cpu::isa_dispatch<&adam_range<true, T>>(s, c, p, g, m, v, vmax, b, e);
    else
      cpu::isa_dispatch<&adam_range<false, T>>(s, c, p, g, m, v, vmax, b, e);
  });
}

}  // namespace

void CpuBackend::optimizer_step(const OptimizerStep& s, std::span<const View> params,
                                std::span<const View> grads, std::span<const View> state1,
                                std::span<const View> state2, std::span<const View> state3) {
  for (size_t i = 0; i < params.size(); ++i) {
    const View& p = params[i];
    auto run = [&]<class T>() {
      T* pd = static_cast<T*>(p.data);
      const T* gd = static_cast<const T*>(grads[i].data);
      auto state = [&](std::span<const View> st) {
        return i < st.size() ? static_cast<T*>(st[i].data) : nullptr;
      };
      if (s.kind == OptimizerKind::SGD)
        sgd<T>(s, pd, gd, state(state1), p.numel());
      else
        adam<T>(s, pd, gd, state(state1), state(state2), state(state3), p.numel());
    };
    if (p.dtype == kFloat32)
      run.template operator()<float>();
    else
      run.template operator()<double>();
  }
}

}  // namespace ember
