// backend/cpu/cpu_gemm.cpp: the GEMM driver of cpu_gemm.h (BLIS-style), the same for every kernel.
//
// Loops, outermost first: M blocks of mc rows; K blocks of kc, the block of a (mc x kc) packed
// into mr-row micro-panels; N chunks of nb columns, the block of b (kc x nb) packed into
// nr-column micro-panels; then the micro-kernel over every (a micro-panel) x (b micro-panel) tile,
// each a panel staying in L1 while b's panels stream from L2. With several threads, each takes a
// range of columns (or of rows, when that duplicates less packing) as a product of its own; nobody
// splits K, so every element of c sums the same K blocks in the same order whatever the thread
// count. This file is baseline code: only the kernels run instructions of their level.
#include "backend/cpu/cpu_gemm.h"

#include <omp.h>

#include <algorithm>
#include <atomic>

#include "backend/cpu/cpu_gemm_bf16.h"
#include "core/host_allocator.h"

namespace ember::cpu {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Splits n into ceil(n / max_block) near-equal blocks, each a multiple of `multiple`.
int64_t balanced_block(int64_t n, int64_t max_block, int64_t multiple) {
  if (n <= 0) return multiple;
  int64_t blocks = ceil_div(n, max_block);
  return ceil_div(ceil_div(n, blocks), multiple) * multiple;
}

// Block sizes of one thread's product: they depend on the operand shapes only, and the K blocks
// on K only, so every element of c sums the same K blocks in the same order on any thread.
struct Blocks {
  int64_t mc, kc, nb, kp;  // kp: kc rounded up to the kernel's kgroup
  template <class T, class S, class P>
  Blocks(const GemmKernel<T, S, P>& kern, const GemmArgs<T, S>& g)
      : mc(balanced_block(g.m, kern.mc, kern.mr)),
        kc(balanced_block(g.k, kern.kc, kern.kgroup)),
        nb(balanced_block(g.n, kern.nb, kern.nr)),
        kp(ceil_div(kc, kern.kgroup) * kern.kgroup) {}
  int64_t elements() const { return mc * kp + kp * nb; }
};

// Runs the micro-kernel over all a panels of the packed block (rows x kc) x the packed b block
// (kc x cols) into c at (row0, col0); the micro-panels hold kp = kc rounded up to kgroup.
template <class T, class S, class P>
void compute_block(const GemmKernel<T, S, P>& kern, const GemmArgs<T, S>& g, const P* apack,
                   int64_t row0, int64_t rows, const P* bpack, int64_t col0, int64_t cols,
                   int64_t kc, bool accumulate) {
  if (kern.block) {
    kern.block(g, apack, row0, rows, bpack, col0, cols, kc, accumulate);
    return;
  }
  int64_t kp = ceil_div(kc, kern.kgroup) * kern.kgroup;
  for (int64_t r = 0; r < rows; r += kern.mr) {
    int nrow = static_cast<int>(std::min<int64_t>(kern.mr, rows - r));
    auto micro = kern.micro[nrow - 1];
    const P* ap = apack + r * kp;
    for (int64_t j = 0; j < cols; j += kern.nr) {
      int ncol = static_cast<int>(std::min<int64_t>(kern.nr, cols - j));
      micro(kc, ap, bpack + j * kp, g.c + (row0 + r) * g.ldc + col0 + j, g.ldc, ncol, accumulate);
    }
  }
}

// c = a @ b on the calling thread, with packing buffers at `buf` (Blocks::elements() of them).
template <class T, class S, class P>
void gemm_serial(const GemmKernel<T, S, P>& kern, const GemmArgs<T, S>& g, P* buf) {
  Blocks bl(kern, g);
  P* apack = buf;
  P* bpack = buf + bl.mc * bl.kp;
  for (int64_t ic = 0; ic < g.m; ic += bl.mc) {
    int64_t rows = std::min(bl.mc, g.m - ic);
    for (int64_t pc = 0; pc < g.k; pc += bl.kc) {
      int64_t kc = std::min(bl.kc, g.k - pc);
      kern.pack_a(g, ic, rows, pc, kc, apack);
      for (int64_t jc = 0; jc < g.n; jc += bl.nb) {
        int64_t cols = std::min(bl.nb, g.n - jc);
        kern.pack_b(g, pc, kc, jc, cols, bpack);
        compute_block(kern, g, apack, ic, rows, bpack, jc, cols, kc, pc > 0);
      }
    }
  }
}

// Thread t's part of a product split among nt threads: a contiguous range of columns (a multiple
// of nr wide) when split_n, else of rows (a multiple of mr). Each part is a product of its own
// that packs its own panels: the threads never wait for one another inside the product (waking a
// sleeping OpenMP thread costs 100-300 us on a busy VM, more than packing the shared operand
// twice).
template <class T, class S, class P>
GemmArgs<T, S> part(const GemmKernel<T, S, P>& kern, const GemmArgs<T, S>& g, bool split_n, int t,
                    int nt) {
  GemmArgs<T, S> p = g;
  int64_t unit = split_n ? kern.nr : kern.mr, extent = split_n ? g.n : g.m;
  int64_t units = ceil_div(extent, unit);
  int64_t lo = std::min(extent, units * t / nt * unit);
  int64_t hi = std::min(extent, units * (t + 1) / nt * unit);
  if (split_n) {
    p.n = hi - lo;
    p.b += lo * g.b_cs;
    p.c += lo;
  } else {
    p.m = hi - lo;
    p.a += lo * g.a_rs;
    p.c += lo * g.ldc;
  }
  return p;
}

// Per-thread scratch kept between calls (packed panels; a fresh allocation of megabytes per call
// would cost a page fault per 4 KiB). From 1 MiB up it is at least a huge block of the host
// allocator (2 MiB aligned, transparent huge pages): the micro-kernel streams packed b panels and
// re-reads packed a panels, and with 4 KiB pages that missed the first-level TLB every 32 k steps
// (1024^3 float32 on 2 threads, AVX-512, went from 73 % to 77 % of the FMA peak).
struct Scratch {
  void* data = nullptr;
  size_t bytes = 0;
  ~Scratch() { release(); }
  void release() {
    if (data) host_deallocate(data, bytes);
    data = nullptr;
    bytes = 0;
  }
  void* get(size_t want) {
    if (want > bytes) {
      release();
      size_t size = want >= (size_t{1} << 20) ? std::max(want, kMinHugeBlock) : want;
      data = host_allocate(size);
      bytes = size;
    }
    return data;
  }
};

thread_local Scratch scratch;

}  // namespace

namespace {

template <class T, class S>
const GemmKernel<T, S>& pick(CpuIsa isa, const GemmKernel<T, S>& avx512,
                             const GemmKernel<T, S>& avx2, const GemmKernel<T, S>& baseline) {
  switch (isa) {
    case CpuIsa::kAmx:
    case CpuIsa::kAvx512Bf16:
    case CpuIsa::kAvx512:
      return avx512;
    case CpuIsa::kAvx2:
      return avx2;
    case CpuIsa::kBaseline:
      break;
  }
  return baseline;
}

}  // namespace

template <>
const GemmKernel<float>& gemm_kernel<float>(CpuIsa isa) {
  return pick(isa, kGemmAvx512F32, kGemmAvx2F32, kGemmBaselineF32);
}

template <>
const GemmKernel<double>& gemm_kernel<double>(CpuIsa isa) {
  return pick(isa, kGemmAvx512F64, kGemmAvx2F64, kGemmBaselineF64);
}

template <>
const GemmKernel<float, BFloat16>& gemm_kernel<float, BFloat16>(CpuIsa isa) {
  return pick(isa, kGemmAvx512BF16, kGemmAvx2BF16, kGemmBaselineBF16);
}

template <>
const GemmKernel<float, Half>& gemm_kernel<float, Half>(CpuIsa isa) {
  return pick(isa, kGemmAvx512F16, kGemmAvx2F16, kGemmBaselineF16);
}

const GemmKernelBF16* gemm_kernel_bf16(CpuIsa isa) {
  if (isa == CpuIsa::kAmx) return &kGemmAmxBF16;
  if (isa == CpuIsa::kAvx512Bf16) return &kGemmAvx512Bf16BF16;
  return nullptr;
}

template <class T, class S, class P>
void gemm(const GemmKernel<T, S, P>& kern, const GemmArgs<T, S>& g, int threads) {
  // Below about 2^17 multiply-adds per thread, waking a second thread costs more than it saves.
  int64_t work = g.m * g.n * g.k;
  int nt = static_cast<int>(std::clamp<int64_t>(work >> 17, 1, std::max(threads, 1)));
  if (omp_in_parallel()) nt = 1;
  if (nt == 1) {
    gemm_serial(kern, g, static_cast<P*>(scratch.get(Blocks(kern, g).elements() * sizeof(P))));
    return;
  }
  // Split the dimension whose packing the threads then share the least of: columns duplicate the
  // packing of a (m x k), rows that of b (k x n); both need enough nr-column or mr-row panels.
  int64_t n_panels = ceil_div(g.n, kern.nr), m_panels = ceil_div(g.m, kern.mr);
  bool split_n = n_panels >= 2 * nt && (g.m <= g.n || m_panels < 2 * nt);
  if (n_panels < 2 * nt && m_panels < 2 * nt) split_n = n_panels >= m_panels;
  // Buffers are allocated here, on the calling thread, so that a failure throws outside OpenMP.
  int64_t elements = 0;
  for (int t = 0; t < nt; ++t)
    elements = std::max(elements, Blocks(kern, part(kern, g, split_n, t, nt)).elements());
  elements = (elements + 31) / 32 * 32;  // each thread's buffer on a 64-byte boundary
  P* base = static_cast<P*>(scratch.get(elements * nt * sizeof(P)));
  // Parts are handed out first come, first served: when the OS starts a thread late, the others
  // have taken its part and it only has to arrive at the region's end. Which thread computes a
  // part does not change the result.
  std::atomic<int> next{0};
#pragma omp parallel num_threads(nt)
  {
    P* mine = base + omp_get_thread_num() * elements;
    for (int i = next.fetch_add(1); i < nt; i = next.fetch_add(1)) {
      GemmArgs<T, S> p = part(kern, g, split_n, i, nt);
      if (p.m > 0 && p.n > 0) gemm_serial(kern, p, mine);
    }
  }
}

template void gemm(const GemmKernel<float>&, const GemmArgs<float>&, int);
template void gemm(const GemmKernel<double>&, const GemmArgs<double>&, int);
template void gemm(const GemmKernel<float, BFloat16>&, const GemmArgs<float, BFloat16>&, int);
template void gemm(const GemmKernel<float, Half>&, const GemmArgs<float, Half>&, int);
template void gemm(const GemmKernel<float, BFloat16, BFloat16>&, const GemmArgs<float, BFloat16>&,
                   int);

}  // namespace ember::cpu
