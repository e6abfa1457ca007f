// backend/cpu/cpu_vec_math.h: float32 exp, log, sigmoid, tanh and GELU written branch-free, so that
// loops over them vectorize, and the dense loops compiled for AVX-512, AVX2 and the x86-64
// baseline.
//
// Every ember source is compiled with -ffp-contract=off (see src/CMakeLists.txt): the compiler
// never fuses a multiply and an add on its own, so the scalar functions below give the same bits in
// every clone, in strided loops and in dense ones, on any x86-64 CPU.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace ember::cpu {

// e^x within 1 ulp (0.99 at worst over all 2^32 floats, against double precision; the test sweeps
// every 509th), the subnormal results below x = -87.3 included. +inf above 88.72, 0 below -103.97
// and for -inf, NaN for NaN. Range reduction x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts,
// the first exact in 9 bits), e^r from a degree-7 polynomial (Cephes' expf coefficients), 2^n
// applied as two factors 2^(n/2) so that neither overflows nor goes subnormal before the final
// product. n comes from x clamped to [-104, 89] (NaN maps to 89), so the conversion to int is
// always defined; r keeps x itself, carrying NaN and +inf through.
[[gnu::always_inline]] inline float exp_f32(float x) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to int
  constexpr float kLow = -104.0f, kHigh = 89.0f;
  float xh = x < kHigh ? x : kHigh;  // the operand order of minps and maxps: one instruction each
  float xc = xh > kLow ? xh : kLow;
  float fn = (xc * kLog2e + kRound) - kRound;
  float r = (x - fn * kLn2Hi) - fn * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float er = (p * (r * r) + r) + 1.0f;
  auto n = static_cast<int32_t>(fn);
  int32_t n1 = n >> 1, n2 = n - n1;  // both in [-75, 65]
  float s1 = __builtin_bit_cast(float, (n1 + 127) << 23);
  float s2 = __builtin_bit_cast(float, (n2 + 127) << 23);
  float y = (er * s1) * s2;
  return x < kLow ? 0.0f : y;
}

// e^x in the CPU kernels' two floating types: float through exp_f32 (it vectorizes), double
// through std::exp.
template <class T>
[[gnu::always_inline]] inline T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>)
    return exp_f32(x);
  else
    return std::exp(x);
}

// 1 / (1 + e^-x), as e^x / (1 + e^x) for negative x so that tiny results keep their precision
// (down to the subnormals) instead of rounding to 0. Within 3 ulp (2.83 at worst); NaN for NaN.
[[gnu::always_inline]] inline float sigmoid_f32(float x) {
  float ax = x < 0.0f ? -x : x;
  float t = exp_f32(-ax);
  float s = 1.0f / (1.0f + t);
  return x < 0.0f ? t * s : s;
}

// tanh x: for |x| < 0.625 the odd polynomial x + x^3 P(x^2) (Cephes' tanhf coefficients), else
// 1 - 2 / (e^(2|x|) + 1) with x's sign. Within 2 ulp (1.33 at worst); +-1 for large |x|, NaN for
// NaN, -0 for -0.
[[gnu::always_inline]] inline float tanh_f32(float x) {
  float ax = x < 0.0f ? -x : x;
  float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float small = x + x * (z * p);
  float big = 1.0f - 2.0f / (exp_f32(ax + ax) + 1.0f);
  big = x < 0.0f ? -big : big;
  small = x == 0.0f ? x : small;  // x + x * (...) would turn -0 into +0
  return ax < 0.625f ? small : big;
}

// log x within 1 ulp (0.83 at worst over all 2^32 floats, against double precision), subnormal
// inputs included.
// -inf for +-0, NaN below 0 and for NaN, +inf for +inf. x = m 2^e with m in [sqrt(1/2), sqrt(2)),
// log m from m - 1 and a degree-9 polynomial (Cephes' logf coefficients), e ln2 added in two
// parts. Subnormal x is first scaled by 2^25 (exact).
[[gnu::always_inline]] inline float log_f32(float x) {
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f, kSqrtHalf = 0.70710678118654752f;
  constexpr float kMinNormal = 1.17549435e-38f, kScale = 33554432.0f;  // 2^25
  constexpr float kInf = __builtin_inff();
  // Selects on float conditions only (no && or ||): the loops over this function vectorize.
  float xs = x < kMinNormal ? x * kScale : x;
  float shift = x < kMinNormal ? 25.0f : 0.0f;
  auto bits = __builtin_bit_cast(int32_t, xs);
  float fe = static_cast<float>(((bits >> 23) & 0xff) - 126) - shift;
  float m = __builtin_bit_cast(float, (bits & 0x007fffff) | 0x3f000000);  // [0.5, 1)
  fe = m < kSqrtHalf ? fe - 1.0f : fe;
  float f = m < kSqrtHalf ? (m + m) - 1.0f : m - 1.0f;
  float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  float y = (p * f) * z + fe * kLn2Lo;
  y = y - 0.5f * z;
  float r = (f + y) + fe * kLn2Hi;
  r = x == kInf ? kInf : r;
  r = x == 0.0f ? -kInf : r;
  r = x < 0.0f ? __builtin_nanf("") : r;
  return x != x ? x : r;
}

// The standard normal distribution function Phi(x) = (1 + erf(x / sqrt 2)) / 2, branch-free. With
// z = x / sqrt 2: for |z| < 0.5, 1/2 + z P(z^2) / 2 (P of degree 4, a least-squares fit of erf(z) /
// z on Chebyshev nodes, relative error 1.4e-9); else from erfc |z| = t e^(-z^2 + Q(t)), t = 1 / (1
// + |z| / 2) (Numerical Recipes' erfcc: Q of degree 9, relative error 1.2e-7), as 1 - erfc / 2
// above 0 and erfc / 2 below, so the lower tail keeps its relative precision. GELU's relative
// error against double precision, measured over every 97th float: 1.4e-6 down to x = -3, 2.9e-6
// to -5.6, 6.9e-6 to -8.5 (where Phi is 1e-17), 1.8e-5 below (the rounding of z^2 in the
// exponent); 0 and 1 at -inf and +inf, NaN for NaN.
[[gnu::always_inline]] inline float normal_cdf_f32(float x) {
  const float z = x * 0.70710678118654752f;
  const float az = z < 0.0f ? -z : z;
  const float z2 = z * z;
  float p = 4.71756741451715e-3f;
  p = p * z2 - 2.6756971904317556e-2f;
  p = p * z2 + 1.1282819468817708e-1f;
  p = p * z2 - 3.7612608404051723e-1f;
  p = p * z2 + 1.1283791655539248f;
  const float small = 0.5f + 0.5f * (z * p);
  const float t = 1.0f / (1.0f + 0.5f * az);
  float q = 0.17087277f;
  q = q * t - 0.82215223f;
  q = q * t + 1.48851587f;
  q = q * t - 1.13520398f;
  q = q * t + 0.27886807f;
  q = q * t - 0.18628806f;
  q = q * t + 0.09678418f;
  q = q * t + 0.37409196f;
  q = q * t + 1.00002368f;
  q = q * t - 1.26551223f;
  const float half_erfc = 0.5f * (t * exp_f32(q - az * az));
  const float big = z > 0.0f ? 1.0f - half_erfc : half_erfc;
  return az < 0.5f ? small : big;
}

// GELU (approximate = "none"), x Phi(x), and its gradient g (Phi(x) + x e^(-x^2 / 2) / sqrt(2 pi)).
[[gnu::always_inline]] inline float gelu_f32(float x) {
  return x * normal_cdf_f32(x);
}
[[gnu::always_inline]] inline float gelu_backward_f32(float x, float g) {
  const float pdf = exp_f32(-0.5f * (x * x)) * 0.3989422804014327f;
  return g * (normal_cdf_f32(x) + x * pdf);
}

// out[i] = f(in[i]) for i < n, for f = exp_f32, log_f32, sigmoid_f32, tanh_f32 and gelu_f32, on one
// thread.
// Each picks, once, the loop compiled for the CPU at hand: AVX-512 (16 lanes), AVX2 (8) or the
// baseline (4).
void exp_f32(float* out, const float* in, int64_t n);
void log_f32(float* out, const float* in, int64_t n);
void sigmoid_f32(float* out, const float* in, int64_t n);
void tanh_f32(float* out, const float* in, int64_t n);
void gelu_f32(float* out, const float* in, int64_t n);
// out[i] = gelu_backward_f32(x[i], g[i]) for i < n (out may be x or g).
void gelu_backward_f32(float* out, const float* x, const float* g, int64_t n);

}  // namespace ember::cpu
