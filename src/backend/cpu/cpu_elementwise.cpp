// backend/cpu/cpu_elementwise.cpp: unary, binary and where loops, instantiated from the op tables.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"
#include "backend/cpu/cpu_vec_math.h"
#include "kernels/scalar_math.h"
#include "kernels/strided_iter.h"

namespace ember {

namespace {

// f runs on the compute type C (float for the 16-bit floating types) and its result is stored as
// Out (kernels/scalar_math.h's unary_out_t).
template <class F, class T>
void unary_loop(const View& dst, const View& src, const F& f) {
  using Out = math::unary_out_t<F, T>;
  const math::OpMathUnary<F, T> g{f};
  cpu::StridedOperands<2> it({&dst, &src});
  it.run([&g](char** p, const int64_t* s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const T* a = reinterpret_cast<const T*>(p[1]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(T)) {
      for (int64_t i = 0; i < n; ++i) o[i] = g(a[i]);
    } else if (s[0] == sizeof(Out) && s[1] == 0) {
      std::fill_n(o, n, g(*a));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = g(*reinterpret_cast<const T*>(p[1] + i * s[1]));
    }
  });
}

// A float32 op of cpu_vec_math.h: contiguous runs go to its vectorized loop, other strides to the
// same scalar function, so a strided input gives the same bits as a contiguous one.
template <float (*scalar)(float), void (*span)(float*, const float*, int64_t)>
void unary_f32_vec(const View& dst, const View& src) {
  cpu::StridedOperands<2> it({&dst, &src});
  it.run([](char** p, const int64_t* s, int64_t n) {
    constexpr int64_t st = sizeof(float);
    if (s[0] == st && s[1] == st) {
      span(reinterpret_cast<float*>(p[0]), reinterpret_cast<const float*>(p[1]), n);
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<float*>(p[0] + i * s[0]) =
          scalar(*reinterpret_cast<const float*>(p[1] + i * s[1]));
  });
}

// A binary float32 op of cpu_vec_math.h, as unary_f32_vec.
template <float (*scalar)(float, float), void (*span)(float*, const float*, const float*, int64_t)>
void binary_f32_vec(const View& dst, const View& a, const View& b) {
  cpu::StridedOperands<3> it({&dst, &a, &b});
  it.run([](char** p, const int64_t* s, int64_t n) {
    constexpr int64_t st = sizeof(float);
    if (s[0] == st && s[1] == st && s[2] == st) {
      span(reinterpret_cast<float*>(p[0]), reinterpret_cast<const float*>(p[1]),
           reinterpret_cast<const float*>(p[2]), n);
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<float*>(p[0] + i * s[0]) =
          scalar(*reinterpret_cast<const float*>(p[1] + i * s[1]),
                 *reinterpret_cast<const float*>(p[2] + i * s[2]));
  });
}

// As unary_loop: fn runs on the compute type, its result is stored as Out.
template <class F, class T>
void binary_loop(const View& dst, const View& a, const View& b, const F& fn) {
  using Out = math::binary_out_t<F, T>;
  const math::OpMathBinary<F, T> f{fn};
  if (int64_t n = dst.numel(); n <= cpu::kGrainSize && kernels::is_dense(dst) &&
                               kernels::is_dense(a) && kernels::is_dense(b)) {
    // Small and dense: one flat loop, no dim merging or threads.
    Out* o = static_cast<Out*>(dst.data);
    const T* x = static_cast<const T*>(a.data);
    const T* y = static_cast<const T*>(b.data);
    for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    return;
  }
  cpu::StridedOperands<3> it({&dst, &a, &b});
  it.run([&f](char** p, const int64_t* s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    const T* y = reinterpret_cast<const T*>(p[2]);
    constexpr int64_t so = sizeof(Out), st = sizeof(T);
    if (s[0] == so && s[1] == st && s[2] == st) {
      // In place (o == x) gets its own loop: the vectorized version of the general one checks
      // that o and x do not overlap, and would fall back to scalar code.
      if constexpr (std::is_same_v<Out, T>) {
        if (o == x) {
          for (int64_t i = 0; i < n; ++i) o[i] = f(o[i], y[i]);
          return;
        }
      }
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (s[0] == so && s[1] == st && s[2] == 0) {
      const T y0 = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y0);
    } else if (s[0] == so && s[1] == 0 && s[2] == st) {
      const T x0 = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = f(x0, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = f(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                                                     *reinterpret_cast<const T*>(p[2] + i * s[2]));
    }
  });
}

}  // namespace

void CpuBackend::unary(UnaryOp op, const View& dst, const View& src, const UnaryParams& p) {
  if (src.dtype == kFloat32 && dst.dtype == kFloat32) {
    switch (op) {
      case UnaryOp::Exp:
        return unary_f32_vec<cpu::exp_f32, cpu::exp_f32>(dst, src);
      case UnaryOp::Log:
        return unary_f32_vec<cpu::log_f32, cpu::log_f32>(dst, src);
      case UnaryOp::Sigmoid:
        return unary_f32_vec<cpu::sigmoid_f32, cpu::sigmoid_f32>(dst, src);
      case UnaryOp::Tanh:
        return unary_f32_vec<cpu::tanh_f32, cpu::tanh_f32>(dst, src);
      case UnaryOp::Gelu:
        if (p.a != 1) return unary_f32_vec<cpu::gelu_f32, cpu::gelu_f32>(dst, src);
        break;
      default:
        break;
    }
  }
  switch (op) {
#define EMBER_UNARY(Name, name, Fn, kind, ...)                                                   \
  case UnaryOp::Name:                                                                            \
    dispatch_kind<OpKind::kind>(                                                                 \
        src.dtype, #name, [&]<class T>() { unary_loop<math::Fn, T>(dst, src, math::Fn{{p}}); }); \
    return;
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
  }
}

void CpuBackend::binary(BinaryOp op, const View& dst, const View& a, const View& b) {
  if (op == BinaryOp::GeluBackward && dst.dtype == kFloat32 && a.dtype == kFloat32 &&
      b.dtype == kFloat32)
    return binary_f32_vec<cpu::gelu_backward_f32, cpu::gelu_backward_f32>(dst, a, b);
  switch (op) {
#define EMBER_BINARY(Name, name, Fn, kind, ...)                                               \
  case BinaryOp::Name:                                                                        \
    dispatch_kind<OpKind::kind>(                                                              \
        a.dtype, #name, [&]<class T>() { binary_loop<math::Fn, T>(dst, a, b, math::Fn{}); }); \
    return;
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
  }
}

void CpuBackend::where(const View& dst, const View& cond, const View& a, const View& b) {
  visit_dtype(dst.dtype, [&]<class T>() {
    cpu::StridedOperands<4> it({&dst, &cond, &a, &b});
    it.run([](char** p, const int64_t* s, int64_t n) {
      constexpr int64_t st = sizeof(T);
      if (s[0] == st && s[1] == sizeof(bool) && (s[2] == st || s[2] == 0) &&
          (s[3] == st || s[3] == 0)) {  // dense, or one side a broadcast scalar (relu's backward)
        T* o = reinterpret_cast<T*>(p[0]);
        const bool* c = reinterpret_cast<const bool*>(p[1]);
        const T* x = reinterpret_cast<const T*>(p[2]);
        const T* y = reinterpret_cast<const T*>(p[3]);
        if (s[2] == st && s[3] == st) {
          for (int64_t i = 0; i < n; ++i) o[i] = cpu::select(c[i], x[i], y[i]);
        } else if (s[2] == st) {
          const T y0 = *y;
          for (int64_t i = 0; i < n; ++i) o[i] = cpu::select(c[i], x[i], y0);
        } else if (s[3] == st) {
          const T x0 = *x;
          for (int64_t i = 0; i < n; ++i) o[i] = cpu::select(c[i], x0, y[i]);
        } else {
          const T x0 = *x, y0 = *y;
          for (int64_t i = 0; i < n; ++i) o[i] = cpu::select(c[i], x0, y0);
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            *reinterpret_cast<const T*>(p[c ? 2 : 3] + i * s[c ? 2 : 3]);
      }
    });
  });
}

}  // namespace ember
