// backend/cpu/cpu_matmul.cpp: batched matrix multiply -- ember's own GEMM (cpu_gemm.h, the kernel
// of the CPU's instruction-set level) for float32 and float64; for bfloat16 the AMX or AVX512-BF16
// kernel (cpu_gemm_bf16.h) where the level has one and
// get_bf16_matmul_reduced_precision_reduction() allows it, else, as for float16, operands widened
// to float32 while packed; 16-bit products accumulate in float32 and are rounded once. Products
// of a few rows against a transposed weight read the weight where it lies (cpu_gemv.h, or the
// AMX weight-direct path). A plain loop for small products and integer dtypes. Results never
// depend on the thread count.
#include <algorithm>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_gemm.h"
#include "backend/cpu/cpu_gemm_bf16.h"
#include "backend/cpu/cpu_gemv.h"
#include "backend/cpu/cpu_half_convert.h"
#include "backend/cpu/cpu_loops.h"
#include "core/host_allocator.h"
#include "ember/settings.h"

namespace ember {

namespace {

// Below this many multiply-adds per matrix, a plain loop beats the fixed cost of the GEMM
// (packing, blocking): a Linear(10, 1) step's products are 320 each.
constexpr int64_t kSmallGemm = 4096;

// c (M, N) = a (M, K) @ b (K, N) for one small matrix, any strides, a and b of S read as T. The
// inner loop runs along the longer of K (dot products) and N (adding a[m, k] * b[k, :] to c's
// row).
template <class T, class S>
void small_gemm(T* c, const S* a, int64_t as1, int64_t as2, const S* b, int64_t bs1, int64_t bs2,
                int64_t M, int64_t N, int64_t K) {
  auto at = [](S x) { return static_cast<T>(x); };
  if (K >= N) {
    for (int64_t m = 0; m < M; ++m) {
      const S* arow = a + m * as1;
      for (int64_t n = 0; n < N; ++n) {
        const S* bcol = b + n * bs2;
        T acc = 0;
        if (as2 == 1 && bs1 == 1) {
          for (int64_t k = 0; k < K; ++k) acc += at(arow[k]) * at(bcol[k]);
        } else {
          for (int64_t k = 0; k < K; ++k) acc += at(arow[k * as2]) * at(bcol[k * bs1]);
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
      T x = at(a[m * as1 + k * as2]);
      const S* brow = b + k * bs1;
      if (bs2 == 1) {
        for (int64_t n = 0; n < N; ++n) crow[n] += x * at(brow[n]);
      } else {
        for (int64_t n = 0; n < N; ++n) crow[n] += x * at(brow[n * bs2]);
      }
    }
  }
}

// c (B, M, N, dense) = a (B, M, K) @ b (B, K, N) of S with cpu::gemm and `kernel`, which reads
// any strides. Many small matrices run one per thread; otherwise each product uses all threads.
template <class T, class S, class P>
void gemm_batches(const cpu::GemmKernel<T, S, P>& kernel, T* c, const View& a, const View& b) {
  int64_t B = a.sizes[0], M = a.sizes[1], N = b.sizes[2], K = a.sizes[2];
  auto one = [&](int64_t i, int threads) {
    cpu::GemmArgs<T, S> g{.m = M,
                          .n = N,
                          .k = K,
                          .a = static_cast<const S*>(a.data) + i * a.strides[0],
                          .a_rs = a.strides[1],
                          .a_cs = a.strides[2],
                          .b = static_cast<const S*>(b.data) + i * b.strides[0],
                          .b_rs = b.strides[1],
                          .b_cs = b.strides[2],
                          .c = c + i * M * N,
                          .ldc = N};
    if constexpr (std::is_same_v<P, BFloat16>) {
      if (&kernel == &cpu::kGemmAmxBF16 && cpu::gemm_amx_weight_direct(g, threads)) return;
    }
    // A few rows against a transposed weight (a Linear's decoding step): W read where it lies.
    if constexpr (std::is_same_v<T, float> && std::is_same_v<S, BFloat16>) {
      if (cpu::gemv_weight_direct(cpu::cpu_isa(), g, threads, std::is_same_v<P, BFloat16>)) return;
    } else if constexpr (std::is_same_v<T, float>) {
      if (cpu::gemv_weight_direct(cpu::cpu_isa(), g, threads)) return;
    }
    cpu::gemm(kernel, g, threads);
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

// c (B, M, N, dense, of T) = a @ b, a and b of S.
template <class T, class S>
void matmul_into(T* c, const View& a, const View& b) {
  int64_t B = a.sizes[0], M = a.sizes[1], N = b.sizes[2], K = a.sizes[2];
  if (K == 0) {
    std::fill_n(c, B * M * N, T(0));
    return;
  }
  const S* pa = static_cast<const S*>(a.data);
  const S* pb = static_cast<const S*>(b.data);
  // Few rows against a transposed weight go to the weight-direct path whatever their size, so
  // that a row's result does not depend on how many columns its product has (stacked weights).
  const bool weight_direct =
      std::is_same_v<T, float> && cpu::gemv_takes(cpu::cpu_isa(), M, b.strides[1]);
  if (M * N * K <= kSmallGemm && !weight_direct) {
    for (int64_t i = 0; i < B; ++i)
      small_gemm<T, S>(c + i * M * N, pa + i * a.strides[0], a.strides[1], a.strides[2],
                       pb + i * b.strides[0], b.strides[1], b.strides[2], M, N, K);
    return;
  }
  if constexpr (std::is_same_v<S, BFloat16>) {
    const cpu::GemmKernelBF16* native = cpu::gemm_kernel_bf16(cpu::cpu_isa());
    if (native && get_bf16_matmul_reduced_precision_reduction()) {
      gemm_batches(*native, c, a, b);
      return;
    }
  }
  gemm_batches(cpu::gemm_kernel<T, S>(cpu::cpu_isa()), c, a, b);
}

template <class T>
void matmul_float(const View& dst, const View& a, const View& b) {
  if (dst.sizes[1] == 0 || dst.sizes[2] == 0) return;
  if constexpr (is_reduced_float_v<T>) {
    // Accumulated in a float32 buffer, then rounded once into dst.
    int64_t n = dst.sizes[0] * dst.sizes[1] * dst.sizes[2];
    size_t bytes = static_cast<size_t>(n) * sizeof(float);
    float* c = static_cast<float*>(host_allocate(bytes));
    struct Free {
      void* p;
      size_t n;
      ~Free() { host_deallocate(p, n); }
    } free_c{c, bytes};
    matmul_into<float, T>(c, a, b);
    cpu::convert(static_cast<T*>(dst.data), c, n);
  } else {
    matmul_into<T, T>(static_cast<T*>(dst.data), a, b);
  }
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
    if constexpr (std::is_floating_point_v<T> || is_reduced_float_v<T>)
      matmul_float<T>(dst, a, b);
    else
      matmul_int<T>(dst, a, b);
  });
}

}  // namespace ember
