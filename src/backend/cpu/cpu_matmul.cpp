// backend/cpu/cpu_matmul.cpp: batched matrix multiply -- ember's AVX-512 sgemm for float32 on CPUs
// that have AVX-512, OpenBLAS for other floats and CPUs, a plain loop for integer dtypes. Strided
// operands are passed to BLAS as transposed layouts when possible. Builds without BLAS
// (EMBER_MINIMAL_DEPS) multiply the other floats with the plain loop too.
#if defined(EMBER_HAVE_BLAS)
#include <cblas.h>
#endif

#include <optional>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"
#include "backend/cpu/cpu_sgemm_avx512.h"
#include "backend/gemm_layout.h"

namespace ember {

namespace {

#if defined(EMBER_HAVE_BLAS)
// Copies a strided (rows, cols) matrix into a dense row-major buffer.
template <class T>
void pack(std::vector<T>& buf, const T* x, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  buf.resize(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) buf[i * cols + j] = x[i * rs + j * cs];
}

template <class T>
void gemm(GemmLayout la, GemmLayout lb, int64_t m, int64_t n, int64_t k, const T* a, const T* b,
          T* c) {
  const CBLAS_TRANSPOSE ta = la.transposed ? CblasTrans : CblasNoTrans,
                        tb = lb.transposed ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, la.ld, b, lb.ld, 0.0f, c, n);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, la.ld, b, lb.ld, 0.0, c, n);
}
#endif

// Below this many multiply-adds per matrix, a plain loop beats the fixed cost of a BLAS call
// (argument checks, packing, dispatch): a Linear(10, 1) step's products are 320 each.
constexpr int64_t kSmallGemm = 4096;

// c (M, N) = a (M, K) @ b (K, N) for one small matrix, any strides. The inner loop runs along
// the longer of K (dot products) and N (adding a[m, k] * b[k, :] to c's row).
template <class T>
void small_gemm(T* c, const T* a, int64_t as1, int64_t as2, const T* b, int64_t bs1, int64_t bs2,
                int64_t M, int64_t N, int64_t K) {
  if (K >= N) {
    for (int64_t m = 0; m < M; ++m) {
      const T* arow = a + m * as1;
      for (int64_t n = 0; n < N; ++n) {
        const T* bcol = b + n * bs2;
        T acc = 0;
        if (as2 == 1 && bs1 == 1) {
          for (int64_t k = 0; k < K; ++k) acc += arow[k] * bcol[k];
        } else {
          for (int64_t k = 0; k < K; ++k) acc += arow[k * as2] * bcol[k * bs1];
        }
        c[m * N + n] = acc;
      }
    }
    return;
  }
  for (int64_t m = 0; m < M; ++m) {
    T* crow = c + m * N;
    std::fill_n(crow, N, T(0));
    for (int64_t k = 0; k < K; ++k) {
      T x = a[m * as1 + k * as2];
      const T* brow = b + k * bs1;
      if (bs2 == 1) {
        for (int64_t n = 0; n < N; ++n) crow[n] += x * brow[n];
      } else {
        for (int64_t n = 0; n < N; ++n) crow[n] += x * brow[n * bs2];
      }
    }
  }
}

// dst (B, M, N) = a (B, M, K) @ b (B, K, N) in float32 with cpu::sgemm_avx512, which reads any
// strides. Many small matrices run one per thread; otherwise each product uses all threads.
void sgemm_batches(const View& dst, const View& a, const View& b) {
  int64_t B = dst.sizes[0], M = dst.sizes[1], N = dst.sizes[2], K = a.sizes[2];
  auto one = [&](int64_t i, int threads) {
    cpu::SgemmArgs g{.m = M,
                     .n = N,
                     .k = K,
                     .a = static_cast<const float*>(a.data) + i * a.strides[0],
                     .a_rs = a.strides[1],
                     .a_cs = a.strides[2],
                     .b = static_cast<const float*>(b.data) + i * b.strides[0],
                     .b_rs = b.strides[1],
                     .b_cs = b.strides[2],
                     .c = static_cast<float*>(dst.data) + i * M * N,
                     .ldc = N};
    cpu::sgemm_avx512(g, threads);
  };
  int threads = omp_get_max_threads();
  if (B > 1 && B >= threads && M * N * K < (int64_t{1} << 24)) {
    cpu::parallel_for(B, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) one(i, 1);
    });
    return;
  }
  for (int64_t i = 0; i < B; ++i) one(i, threads);
}

template <class T>
void matmul_float(const View& dst, const View& a, const View& b) {
  int64_t B = dst.sizes[0], M = dst.sizes[1], N = dst.sizes[2], K = a.sizes[2];
  T* c = static_cast<T*>(dst.data);
  if (M == 0 || N == 0) return;
  if (K == 0) {
    std::fill_n(c, B * M * N, T(0));
    return;
  }
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  if (M * N * K <= kSmallGemm) {
    for (int64_t i = 0; i < B; ++i)
      small_gemm(c + i * M * N, pa + i * a.strides[0], a.strides[1], a.strides[2],
                 pb + i * b.strides[0], b.strides[1], b.strides[2], M, N, K);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (cpu::sgemm_avx512_supported()) {
      sgemm_batches(dst, a, b);
      return;
    }
  }
#if defined(EMBER_HAVE_BLAS)
  auto la = gemm_layout(M, K, a.strides[1], a.strides[2]);
  auto lb = gemm_layout(K, N, b.strides[1], b.strides[2]);
  std::vector<T> bufa, bufb;
  for (int64_t i = 0; i < B; ++i) {
    const T* ai = pa + i * a.strides[0];
    const T* bi = pb + i * b.strides[0];
    GemmLayout ua = la.value_or(GemmLayout{false, K});
    GemmLayout ub = lb.value_or(GemmLayout{false, N});
    if (!la) {
      pack(bufa, ai, M, K, a.strides[1], a.strides[2]);
      ai = bufa.data();
    }
    if (!lb) {
      pack(bufb, bi, K, N, b.strides[1], b.strides[2]);
      bi = bufb.data();
    }
    gemm<T>(ua, ub, M, N, K, ai, bi, c + i * M * N);
  }
#else
  // No BLAS: the loop, each thread taking whole rows of c.
  cpu::parallel_for(B * M, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(N * K, 1)),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t r = begin; r < end; ++r) {
                        int64_t i = r / M, m = r % M;
                        small_gemm(c + r * N, pa + i * a.strides[0] + m * a.strides[1],
                                   a.strides[1], a.strides[2], pb + i * b.strides[0], b.strides[1],
                                   b.strides[2], 1, N, K);
                      }
                    });
#endif
}

template <class T>
void matmul_int(const View& dst, const View& a, const View& b) {
  int64_t B = dst.sizes[0], M = dst.sizes[1], N = dst.sizes[2], K = a.sizes[2];
  T* c = static_cast<T*>(dst.data);
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  cpu::parallel_for(
      B * M, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(N * K, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t i = r / M, m = r % M;
          const T* arow = pa + i * a.strides[0] + m * a.strides[1];
          const T* bmat = pb + i * b.strides[0];
          for (int64_t j = 0; j < N; ++j) {
            T acc = 0;
            for (int64_t k = 0; k < K; ++k) {
              if constexpr (std::is_same_v<T, bool>)
                acc = acc || (arow[k * a.strides[2]] && bmat[k * b.strides[1] + j * b.strides[2]]);
              else
                acc = static_cast<T>(acc + arow[k * a.strides[2]] *
                                               bmat[k * b.strides[1] + j * b.strides[2]]);
            }
            c[r * N + j] = acc;
          }
        }
      });
}

}  // namespace

void CpuBackend::matmul(const View& dst, const View& a, const View& b) {
  visit_dtype(dst.dtype, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>)
      matmul_float<T>(dst, a, b);
    else
      matmul_int<T>(dst, a, b);
  });
}

}  // namespace ember
