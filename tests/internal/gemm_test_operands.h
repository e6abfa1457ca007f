// tests/internal/gemm_test_operands.h: GEMM operands for the kernel tests (test_gemm.cpp,
// test_gemm_bf16.cpp) -- random matrices in three layouts, the GemmArgs of a product, and the
// check of c against a float64 reference within the rounding bound of a k-term sum.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_gemm.h"

namespace ember::cpu::gemm_test {

// An operand (rows, cols) in one of three layouts, over a buffer it owns.
enum class Layout { kRowMajor, kTransposed, kStrided };

template <class T>
struct Operand {
  std::vector<T> data;
  int64_t rs = 0, cs = 0;
  Operand(int64_t rows, int64_t cols, Layout layout, std::mt19937& rng) {
    std::uniform_real_distribution<double> dist(-0.5, 0.5);
    switch (layout) {
      case Layout::kRowMajor:
        rs = cols, cs = 1;
        break;
      case Layout::kTransposed:
        rs = 1, cs = rows;
        break;
      case Layout::kStrided:  // every other element of every other row of a (2 rows, 2 cols)
        rs = 4 * cols, cs = 2;
        break;
    }
    data.resize((rows - 1) * rs + (cols - 1) * cs + 1);
    for (T& x : data) x = static_cast<T>(static_cast<float>(dist(rng)));
  }
  T at(int64_t i, int64_t j) const { return data[i * rs + j * cs]; }
  // The same operand widened to float32, same layout.
  Operand<float> widened() const {
    Operand<float> w;
    w.rs = rs, w.cs = cs;
    for (T x : data) w.data.push_back(static_cast<float>(x));
    return w;
  }
  Operand() = default;
};

struct Shape3 {
  int64_t m, k, n;
};

template <class T, class S>
GemmArgs<T, S> args(const Shape3& s, const Operand<S>& a, const Operand<S>& b, T* c, int64_t ldc) {
  return {.m = s.m,
          .n = s.n,
          .k = s.k,
          .a = a.data.data(),
          .a_rs = a.rs,
          .a_cs = a.cs,
          .b = b.data.data(),
          .b_rs = b.rs,
          .b_cs = b.cs,
          .c = c,
          .ldc = ldc};
}

inline std::string describe(const Shape3& s, Layout la, Layout lb, const char* kernel) {
  return std::string(kernel) + " m=" + std::to_string(s.m) + " k=" + std::to_string(s.k) +
         " n=" + std::to_string(s.n) + " a layout " + std::to_string(static_cast<int>(la)) +
         " b layout " + std::to_string(static_cast<int>(lb));
}

// c (m x n, row stride ldc, the padding past n NaN) against float64 sums of a @ b: each element
// within 2 k eps of the sum of |a_ip b_pj| (the rounding bound of a k-term dot product), the
// padding untouched. Reports at most five failures, labelled `what`.
template <class T, class S>
void check_against_reference(const std::vector<T>& c, int64_t ldc, const Operand<S>& a,
                             const Operand<S>& b, const Shape3& s, double eps,
                             const std::string& what) {
  int bad = 0;
  for (int64_t i = 0; i < s.m && bad < 5; ++i) {
    for (int64_t j = 0; j < s.n && bad < 5; ++j) {
      double want = 0, mag = 0;
      for (int64_t p = 0; p < s.k; ++p) {
        double t = static_cast<double>(a.at(i, p)) * static_cast<double>(b.at(p, j));
        want += t;
        mag += std::abs(t);
      }
      double got = c[i * ldc + j];
      if (!(std::abs(got - want) <= 2 * s.k * eps * mag + 1e-30)) {
        ADD_FAILURE() << what << " c[" << i << "][" << j << "] = " << got << ", want " << want;
        ++bad;
      }
    }
    for (int64_t j = s.n; j < ldc; ++j)
      if (!std::isnan(c[i * ldc + j])) {
        ADD_FAILURE() << what << " wrote c's padding at row " << i;
        ++bad;
      }
  }
}

}  // namespace ember::cpu::gemm_test
