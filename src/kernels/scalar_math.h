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
// (0 < x) - (x < 0), as PyTorch: NaN and -0.0 give 0.
struct SignFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T> || is_bool_v<T>)
      return x > T(0) ? T(1) : T(0);
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

// --- the ops of issue 17: trigonometric, error and exponential functions, activations, rounding,
// classification. All run on the compute type (float for the 16-bit types).

// Float functions of the C library, one line each.
#define EMBER_STD_UNARY(Fn, expr)               \
  struct Fn : ParamFn {                         \
    template <class T>                          \
    EMBER_HOST_DEVICE T operator()(T x) const { \
      return expr;                              \
    }                                           \
  };
EMBER_STD_UNARY(SinFn, std::sin(x))
EMBER_STD_UNARY(CosFn, std::cos(x))
EMBER_STD_UNARY(TanFn, std::tan(x))
EMBER_STD_UNARY(AsinFn, std::asin(x))
EMBER_STD_UNARY(AcosFn, std::acos(x))
EMBER_STD_UNARY(AtanFn, std::atan(x))
EMBER_STD_UNARY(SinhFn, std::sinh(x))
EMBER_STD_UNARY(CoshFn, std::cosh(x))
EMBER_STD_UNARY(ErfFn, std::erf(x))
EMBER_STD_UNARY(ErfcFn, std::erfc(x))
EMBER_STD_UNARY(Exp2Fn, std::exp2(x))
EMBER_STD_UNARY(Expm1Fn, std::expm1(x))
EMBER_STD_UNARY(Log2Fn, std::log2(x))
EMBER_STD_UNARY(Log10Fn, std::log10(x))
EMBER_STD_UNARY(ReciprocalFn, T(1) / x)
EMBER_STD_UNARY(FracFn, x - std::trunc(x))
EMBER_STD_UNARY(SiluFn, x / (T(1) + std::exp(-x)))
EMBER_STD_UNARY(SoftsignFn, x / (T(1) + std::fabs(x)))
// log(sigmoid(x)) without overflow: min(x, 0) - log1p(exp(-|x|)).
EMBER_STD_UNARY(LogsigmoidFn, (x < T(0) ? x : T(0)) - std::log1p(std::exp(-std::fabs(x))))
// x * relu6(x + 3) / 6 and relu6(x + 3) / 6.
EMBER_STD_UNARY(HardswishFn, x*(x + T(3) < T(0) ? T(0) : x + T(3) > T(6) ? T(6) : x + T(3)) / T(6))
EMBER_STD_UNARY(HardsigmoidFn, (x + T(3) < T(0) ? T(0) : x + T(3) > T(6) ? T(6) : x + T(3)) / T(6))
// SELU's fixed scale and alpha (Klambauer et al.).
EMBER_STD_UNARY(SeluFn, T(1.0507009873554804934) *
                            (x > T(0) ? x : T(1.6732632423543772848) * std::expm1(x)))
#undef EMBER_STD_UNARY

// softplus with beta p.a and threshold p.b: x where beta x > threshold (exp would overflow).
struct SoftplusFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    const T beta = static_cast<T>(p.a);
    return x * beta > static_cast<T>(p.b) ? x : std::log1p(std::exp(x * beta)) / beta;
  }
};
// x tanh(softplus(x)), softplus with PyTorch's beta 1 and threshold 20.
struct MishFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return x * std::tanh(x > T(20) ? x : std::log1p(std::exp(x)));
  }
};
// alpha = p.a: alpha (exp(x) - 1) for x <= 0.
struct EluFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    return x > T(0) ? x : static_cast<T>(p.a) * std::expm1(x);
  }
};
// alpha = p.a: alpha (exp(x / alpha) - 1) for x <= 0.
struct CeluFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    const T alpha = static_cast<T>(p.a);
    return x > T(0) ? x : alpha * std::expm1(x / alpha);
  }
};
// Clipped to [p.a, p.b]; NaN propagates. Integers compare in double, so that a bound outside
// the dtype's range (uint8 below -1) never wraps.
struct HardtanhFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      const double v = static_cast<double>(x);
      if (v < p.a) return static_cast<T>(p.a);
      if (v > p.b) return static_cast<T>(p.b);
      return x;
    } else {
      if (x < static_cast<T>(p.a)) return static_cast<T>(p.a);
      if (x > static_cast<T>(p.b)) return static_cast<T>(p.b);
      return x;
    }
  }
};
struct SquareFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_bool_v<T>)
      return x;
    else if constexpr (is_int_v<T>)
      return wrap_mul(x, x);
    else
      return x * x;
  }
};
// Rounding: integers are already whole.
struct FloorFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::floor(x);
    else
      return x;
  }
};
struct CeilFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::ceil(x);
    else
      return x;
  }
};
struct TruncFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::trunc(x);
    else
      return x;
  }
};
// Half to even, at p.a decimal places (negative: tens, hundreds, ...), as PyTorch scales; p.b is
// 10^|p.a|, computed once by the op.
struct RoundFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (p.a == 0) return std::rint(x);
      const T ten_pow = static_cast<T>(p.b);
      return p.a < 0 ? std::rint(x / ten_pow) * ten_pow : std::rint(x * ten_pow) / ten_pow;
    } else {
      return x;
    }
  }
};
// The inverse of erf on (-1, 1): Giles' single-precision approximation ("Approximating the
// erfinv function", 2010), then two Newton steps in double precision; +-1 give +-inf, NaN
// outside.
struct ErfinvFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    const double y = static_cast<double>(x);
    if (!(y >= -1.0 && y <= 1.0)) return static_cast<T>(NAN);
    if (y == 1.0 || y == -1.0) return static_cast<T>(y * HUGE_VAL);
    double w = -std::log((1.0 - y) * (1.0 + y)), q;
    if (w < 5.0) {
      w -= 2.5;
      q = 2.81022636e-08;
      q = 3.43273939e-07 + q * w;
      q = -3.5233877e-06 + q * w;
      q = -4.39150654e-06 + q * w;
      q = 0.00021858087 + q * w;
      q = -0.00125372503 + q * w;
      q = -0.00417768164 + q * w;
      q = 0.246640727 + q * w;
      q = 1.50140941 + q * w;
    } else {
      w = std::sqrt(w) - 3.0;
      q = -0.000200214257;
      q = 0.000100950558 + q * w;
      q = 0.00134934322 + q * w;
      q = -0.00367342844 + q * w;
      q = 0.00573950773 + q * w;
      q = -0.0076224613 + q * w;
      q = 0.00943887047 + q * w;
      q = 1.00167406 + q * w;
      q = 2.83297682 + q * w;
    }
    double r = q * y;
    for (int i = 0; i < 2; ++i)  // erf(r) = y: r -= (erf(r) - y) / erf'(r)
      r -= (std::erf(r) - y) / (1.1283791670955126 * std::exp(-r * r));
    return static_cast<T>(r);
  }
};
// Classification: only floating values can be NaN or infinite.
struct IsnanFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T x) const {
    return x != x;
  }
};
struct IsinfFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return x == x && x - x != x - x;
    else
      return false;
  }
};
struct IsfiniteFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE bool operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return x - x == T(0);
    else
      return true;
  }
};
// NaN -> p.a, +inf -> p.b, -inf -> p.c (the op passes the dtype's largest and lowest values
// when not given).
struct NanToNumFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (x != x) return static_cast<T>(p.a);
      if (x - x != x - x) return x > T(0) ? static_cast<T>(p.b) : static_cast<T>(p.c);
    }
    return x;
  }
};
struct BitwiseNotFn : ParamFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_bool_v<T>)
      return !x;
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(~x);
    else
      return x;  // floats are refused by the op
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

// --- binary ops of issue 17.
struct Atan2Fn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    return std::atan2(a, b);
  }
};
struct CopysignFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    return std::copysign(a, b);
  }
};
// Integer division and remainder: the op refuses a zero divisor before the kernel runs (0 here
// keeps the kernel defined); the lowest value over -1 wraps as in PyTorch. bool is refused.
template <class T>
EMBER_HOST_DEVICE T int_rem(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
  }
  return static_cast<T>(a % b);
}
template <class T>
EMBER_HOST_DEVICE T int_quot(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrap_sub(T(0), a);
  }
  return static_cast<T>(a / b);
}
// C's fmod: the remainder takes the dividend's sign.
struct FmodFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::fmod(a, b);
    else if constexpr (is_int_v<T>)
      return int_rem(a, b);
    else
      return a;
  }
};
// Python's %: the remainder takes the divisor's sign.
struct RemainderFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      T r = std::fmod(a, b);
      return r != T(0) && ((b < T(0)) != (r < T(0))) ? r + b : r;
    } else if constexpr (is_int_v<T>) {
      T r = int_rem(a, b);
      if constexpr (std::is_signed_v<T>)
        if (r != T(0) && ((b < T(0)) != (r < T(0)))) r = wrap_add(r, b);
      return r;
    } else {
      return a;
    }
  }
};
// floor(a / b), computed as PyTorch does for floats (from fmod, so that a == b q + r holds).
struct FloorDivideFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b == T(0)) return a / b;
      T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
      if (div == T(0)) return std::copysign(T(0), a / b);
      T floordiv = std::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    } else if constexpr (is_int_v<T>) {
      T q = int_quot(a, b);
      if constexpr (std::is_signed_v<T>)
        if (b != T(0) && b != T(-1) && int_rem(a, b) != T(0) && ((a < T(0)) != (b < T(0))))
          q = wrap_sub(q, T(1));
      return q;
    } else {
      return a;
    }
  }
};
// Bitwise ops on integers and bool (floats are refused by the op).
struct BitwiseAndFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(a & b);
    else
      return a;
  }
};
struct BitwiseOrFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(a | b);
    else
      return a;
  }
};
struct BitwiseXorFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(a ^ b);
    else
      return a;
  }
};
// Shifts as PyTorch's: by the bit width or more (or by a negative amount) a left shift gives 0
// and a right shift the sign (0 or -1); signed right shifts are arithmetic.
struct BitwiseLeftShiftFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      using U = std::make_unsigned_t<T>;
      if (static_cast<U>(b) >= sizeof(T) * 8) return T(0);
      return static_cast<T>(static_cast<U>(a) << static_cast<U>(b));
    } else {
      return a;
    }
  }
};
struct BitwiseRightShiftFn {
  template <class T>
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      using U = std::make_unsigned_t<T>;
      if (static_cast<U>(b) >= sizeof(T) * 8) {
        if constexpr (std::is_signed_v<T>)
          return a < T(0) ? T(-1) : T(0);
        else
          return T(0);
      }
      return static_cast<T>(a >> b);
    } else {
      return a;
    }
  }
};

}  // namespace ember::math
