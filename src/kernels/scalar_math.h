// kernels/scalar_math.h: the scalar function of every element-wise op, usable on host and device.
// The CPU loops and the CUDA kernels are both instantiated from these functors.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "ember/dtype.h"
#include "kernels/host_device.h"
#include "kernels/op_tables.h"

namespace ember::math {

template <class T>
inline constexpr bool is_bool_v = std::is_same_v<T, bool>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !is_bool_v<T>;

// Value conversion between dtypes, as PyTorch casts (bool is "!= 0", floats to uint8 via int64,
// the 16-bit floating types through float).
template <class To, class From>
EMBER_HOST_DEVICE inline To cast(From v) {
  if constexpr (is_reduced_float_v<From>)
    return cast<To>(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, bool>)
    return v != From(0);
  else if constexpr (std::is_same_v<To, uint8_t> && std::is_floating_point_v<From>)
    return static_cast<uint8_t>(static_cast<int64_t>(v));
  else if constexpr (is_reduced_float_v<To>)
    return To(static_cast<float>(v));
  else
    return static_cast<To>(v);
}

// The element-wise loops call a functor on the compute type (opmath_t) and store its result in
// the output's storage type: a functor returning the compute type stores into T, one returning
// bool stores bool.
template <class F, class T>
using unary_out_t = std::conditional_t<
    std::is_same_v<decltype(std::declval<const F&>()(opmath_t<T>{})), opmath_t<T>>, T,
    decltype(std::declval<const F&>()(opmath_t<T>{}))>;
template <class F, class T>
using binary_out_t = std::conditional_t<
    std::is_same_v<decltype(std::declval<const F&>()(opmath_t<T>{}, opmath_t<T>{})), opmath_t<T>>,
    T, decltype(std::declval<const F&>()(opmath_t<T>{}, opmath_t<T>{}))>;

// A functor f on storage type T: converts the operands to the compute type, runs f, stores the
// result as unary_out_t / binary_out_t. What the CPU loops and the CUDA kernels call.
template <class F, class T>
struct OpMathUnary {
  F f;
  EMBER_HOST_DEVICE unary_out_t<F, T> operator()(T x) const {
    return static_cast<unary_out_t<F, T>>(f(static_cast<opmath_t<T>>(x)));
  }
};
template <class F, class T>
struct OpMathBinary {
  F f;
  EMBER_HOST_DEVICE binary_out_t<F, T> operator()(T a, T b) const {
    return static_cast<binary_out_t<F, T>>(
        f(static_cast<opmath_t<T>>(a), static_cast<opmath_t<T>>(b)));
  }
};

// Integer arithmetic wraps around as in PyTorch (done in unsigned to stay defined).
template <class T>
EMBER_HOST_DEVICE T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T>
EMBER_HOST_DEVICE T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T>
EMBER_HOST_DEVICE T wrap_mul(T a, T b) {
  using U = std::conditional_t<sizeof(T) < sizeof(unsigned), unsigned, std::make_unsigned_t<T>>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}
// Integer power by squaring; negative exponents give 0 except for bases 1 and -1.
template <class T>
EMBER_HOST_DEVICE T int_pow(T base, int64_t e) {
  if (e < 0) {
    if (base == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (base == T(-1)) return (e & 1) ? T(-1) : T(1);
    }
    return T(0);
  }
  T result = T(1);
  while (e) {
    if (e & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    e >>= 1;
  }
  return result;
}

// Every functor carries the op's parameters; most ignore them.
struct ParamFn {
  UnaryParams p;
};

struct NegFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_bool_v<T>)
      return x;
    else if constexpr (is_int_v<T>)
      return wrap_sub(T(0), x);
    else
      return -x;
  }
};
struct AbsFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T> || is_bool_v<T>)
      return x;
    else if constexpr (is_int_v<T>)
      return x < T(0) ? wrap_sub(T(0), x) : x;
    else
      return std::fabs(x);
  }
};
struct SignFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T> || is_bool_v<T>)
      return x > T(0) ? T(1) : T(0);
    else if constexpr (std::is_floating_point_v<T>)
      return x != x ? x : T((x > T(0)) - (x < T(0)));
    else
      return T((x > T(0)) - (x < T(0)));
  }
};
struct ExpFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return std::exp(x);
  }
};
struct LogFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return std::log(x);
  }
};
struct Log1pFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return std::log1p(x);
  }
};
struct SqrtFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return std::sqrt(x);
  }
};
struct RsqrtFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return T(1) / std::sqrt(x);
  }
};
struct ReluFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T> || is_bool_v<T>)
      return x;
    else
      return x < T(0) ? T(0) : x;  // NaN stays NaN
  }
};
// Slope p.a for negative inputs.
struct LeakyReluFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return x < T(0) ? x * static_cast<T>(p.a) : x;
  }
};
struct SigmoidFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return T(1) / (T(1) + std::exp(-x));
  }
};
struct TanhFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return std::tanh(x);
  }
};
// p.a == 1 selects the tanh approximation.
struct GeluFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if (p.a == 1) {
      const T k = T(0.7978845608028654);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
    }
    return T(0.5) * x * (T(1) + std::erf(x * T(0.7071067811865476)));
  }
};
// Bounds p.a (min) and p.b (max), each optional; NaN propagates; min > max gives max.
struct ClampFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if (p.has_a && x < static_cast<T>(p.a)) x = static_cast<T>(p.a);
    if (p.has_b && x > static_cast<T>(p.b)) x = static_cast<T>(p.b);
    return x;
  }
};
// x ** p.a
struct PowScalarFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_bool_v<T>)
      return p.a == 0 ? true : x;
    else if constexpr (is_int_v<T>)
      return int_pow(x, static_cast<int64_t>(p.a));
    else {
      if (p.a == 2) return x * x;
      if (p.a == 1) return x;
      if (p.a == 0.5) return std::sqrt(x);
      if (p.a == -1) return T(1) / x;
      return std::pow(x, static_cast<T>(p.a));
    }
  }
};
struct LogicalNotFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T x) const {
    return !static_cast<bool>(x);
  }
};

struct AddFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_bool_v<T>)
      return a || b;
    else if constexpr (is_int_v<T>)
      return wrap_add(a, b);
    else
      return a + b;
  }
};
struct SubFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_bool_v<T>)
      return a != b;
    else if constexpr (is_int_v<T>)
      return wrap_sub(a, b);
    else
      return a - b;
  }
};
struct MulFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_bool_v<T>)
      return a && b;
    else if constexpr (is_int_v<T>)
      return wrap_mul(a, b);
    else
      return a * b;
  }
};
struct DivFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    return a / b;
  }
};
struct PowFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_bool_v<T>)
      return a || !b;
    else if constexpr (is_int_v<T>)
      return int_pow(a, static_cast<int64_t>(b));
    else
      return b == T(2) ? a * a : std::pow(a, b);
  }
};
struct MaximumFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a > b ? a : b;
  }
};
struct MinimumFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a < b ? a : b;
  }
};
// relu's gradient in one pass: (g, y) -> g where y > 0, else 0 (also where y is NaN).
struct ReluBackwardFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T g, T y) const {
    return y > T(0) ? g : T(0);
  }
};
// d gelu(x) / dx * g, for the erf form and the tanh approximation: (x, g) -> gradient.
struct GeluBackwardFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x, T g) const {
    T cdf = T(0.5) * (T(1) + std::erf(x * T(0.7071067811865476)));
    T pdf = std::exp(T(-0.5) * x * x) * T(0.3989422804014327);  // 1 / sqrt(2 pi)
    return g * (cdf + x * pdf);
  }
};
struct GeluTanhBackwardFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x, T g) const {
    const T k = T(0.7978845608028654), c = T(0.044715);
    T t = std::tanh(k * (x + c * x * x * x));
    T dinner = k * (T(1) + T(3) * c * x * x);
    return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * dinner);
  }
};
struct EqFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T a, T b) const {
    return a == b;
  }
};
struct NeFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T a, T b) const {
    return a != b;
  }
};
struct LtFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T a, T b) const {
    return a < b;
  }
};
struct LeFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct GtFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T a, T b) const {
    return a > b;
  }
};
struct GeFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct LogicalAndFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T a, T b) const {
    return static_cast<bool>(a) && static_cast<bool>(b);
  }
};
struct LogicalOrFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T a, T b) const {
    return static_cast<bool>(a) || static_cast<bool>(b);
  }
};
struct LogicalXorFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T a, T b) const {
    return static_cast<bool>(a) != static_cast<bool>(b);
  }
};

}  // namespace ember::math
