// backend/cpu/cpu_reduce.cpp: sum, prod, max, min, argmax and argmin over any set of dims.
// Outputs are computed independently (parallel over outputs), a single long contiguous row is
// split into fixed blocks (parallel, combined in order, so results never depend on thread count),
// and reducing leading dims of a contiguous tensor accumulates whole rows at a time.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/cpu_loops.h"
#include "kernels/reduce_common.h"

namespace ember {

namespace {

using reduce_detail::DimGroup;
using reduce_detail::is_nan;
using reduce_detail::Reducer;

constexpr int64_t kBlock = 4096;

// Sum of n contiguous values in blocks of kBlock: each block goes into 32 independent lanes
// (lane l takes elements l, l + 32, ...; enough for several vector accumulators in flight), the
// lanes are added in order and block sums are added in double. The order is fixed by the code,
// not by the vector width the compiler picks, so every build and every clone (it is compiled per
// instruction set, cpu_isa.h) gives the same result.
template <class T>
[[gnu::always_inline]] inline double sum_contiguous(const T* x, int64_t n) {
  constexpr int kLanes = 32;
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t e = std::min(n, b + kBlock);
    T lanes[kLanes] = {};
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int l = 0; l < kLanes; ++l) lanes[l] += x[i + l];
    T block = 0;
    for (int l = 0; l < kLanes; ++l) block += lanes[l];
    for (; i < e; ++i) block += x[i];
    total += block;
  }
  return total;
}

// Reduces n elements at x with element stride s.
template <ReduceOp op, class T>
typename Reducer<op, T>::Acc reduce_run(const T* x, int64_t n, int64_t s) {
  using R = Reducer<op, T>;
  if constexpr (op == ReduceOp::Sum && std::is_same_v<T, float>) {
    if (s == 1) return cpu::isa_dispatch<&sum_contiguous<float>>(x, n);
  } else if constexpr (op == ReduceOp::Sum && std::is_same_v<T, double>) {
    if (s == 1) return cpu::isa_dispatch<&sum_contiguous<double>>(x, n);
  }
  auto acc = R::identity();
  for (int64_t i = 0; i < n; ++i) acc = R::step(acc, x[i * s]);
  return acc;
}

template <ReduceOp op, class T>
void reduce_typed(const View& dst, const View& src, uint64_t mask) {
  using R = Reducer<op, T>;
  using Acc = typename R::Acc;
  const reduce_detail::ReduceDims g = reduce_detail::split_reduce_dims(dst, src, mask);
  const DimGroup &kept = g.kept, &out = g.out, &red = g.reduced;
  const T* x = static_cast<const T*>(src.data);
  T* y = static_cast<T*>(dst.data);
  int64_t n_out = kept.numel, n_red = red.numel;
  if (n_out == 0) return;
  if (n_red == 0) {
    for (int64_t o = 0; o < n_out; ++o) y[out.offset(o)] = static_cast<T>(R::identity());
    return;
  }
  if (n_out == 1 && red.ndim <= 1) {  // one long row: fixed blocks in parallel, merged in order
    int64_t s = red.ndim ? red.stride(0) : 1;
    int64_t nblocks = (n_red + kBlock * 16 - 1) / (kBlock * 16);
    std::vector<Acc> partial(nblocks);
    cpu::parallel_for(nblocks, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        int64_t start = i * kBlock * 16, len = std::min(n_red - start, kBlock * 16);
        partial[i] = reduce_run<op, T>(x + start * s, len, s);
      }
    });
    Acc acc = partial[0];
    for (int64_t i = 1; i < nblocks; ++i) acc = R::merge(acc, partial[i]);
    y[0] = static_cast<T>(acc);
    return;
  }
  // The innermost kept dim contiguous in src and dst: accumulate whole rows of it, over every
  // reduced offset in order (reducing leading or middle dims, e.g. dim 1 of (N, C, L)).
  const int kl = kept.ndim - 1;
  if (kept.ndim >= 1 && kept.stride(kl) == 1 && out.ndim >= 1 && out.stride(out.ndim - 1) == 1 &&
      out.sizes[out.ndim - 1] % kept.sizes[kl] == 0 && kept.sizes[kl] >= 16) {
    const int64_t width = kept.sizes[kl], rows = n_out / width;
    constexpr int64_t kChunk = 2048;
    const int64_t chunks = (width + kChunk - 1) / kChunk;
    int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / (n_red * std::min(width, kChunk)));
    cpu::parallel_for(rows * chunks, grain, [&](int64_t b, int64_t e) {
      Acc acc[kChunk];
      for (int64_t task = b; task < e; ++task) {
        const int64_t row = task / chunks, j0 = (task % chunks) * kChunk,
                      w = std::min(kChunk, width - j0);
        // Offsets of element (row, j0) in src and dst: the kept / out groups, row-major.
        const T* src_row = x + kept.offset(row * width + j0);
        T* dst_row = y + out.offset(row * width + j0);
        std::fill_n(acc, w, R::identity());
        for (int64_t r = 0; r < n_red; ++r) {
          const T* in = src_row + red.offset(r);
          for (int64_t j = 0; j < w; ++j) acc[j] = R::step(acc[j], in[j]);
        }
        for (int64_t j = 0; j < w; ++j) dst_row[j] = static_cast<T>(acc[j]);
      }
    });
    return;
  }
  // Otherwise one output at a time; a reduced group whose innermost dim is contiguous is
  // reduced in contiguous runs.
  DimGroup red_outer = red;
  int64_t run = 1;
  if (red.ndim >= 2 && red.stride(red.ndim - 1) == 1) {
    run = red.sizes[red.ndim - 1];
    --red_outer.ndim;
    red_outer.numel /= run;
  }
  int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / n_red);
  cpu::parallel_for(n_out, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T* base = x + kept.offset(o);
      Acc acc;
      if (red.ndim <= 1) {
        acc = reduce_run<op, T>(base, n_red, red.ndim ? red.stride(0) : 1);
      } else if (run > 1) {
        acc = reduce_run<op, T>(base + red_outer.offset(0), run, 1);
        for (int64_t r = 1; r < red_outer.numel; ++r)
          acc = R::merge(acc, reduce_run<op, T>(base + red_outer.offset(r), run, 1));
      } else {
        acc = R::identity();
        for (int64_t r = 0; r < n_red; ++r) acc = R::step(acc, base[red.offset(r)]);
      }
      y[out.offset(o)] = static_cast<T>(acc);
    }
  });
}

// argmax / argmin over the single dim in mask: first index of the extreme (NaN counts as one).
template <bool is_max, class T>
void arg_reduce_typed(const View& dst, const View& src, uint64_t mask) {
  const reduce_detail::ReduceDims g = reduce_detail::split_reduce_dims(dst, src, mask);
  const DimGroup &kept = g.kept, &out = g.out;
  int64_t len = g.reduced.numel, s = g.reduced.ndim ? g.reduced.stride(0) : 1;
  const T* x = static_cast<const T*>(src.data);
  int64_t* y = static_cast<int64_t*>(dst.data);
  int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(len, 1));
  cpu::parallel_for(kept.numel, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T* row = x + kept.offset(o);
      int64_t best = 0;
      T bv = row[0];
      for (int64_t i = 1; i < len && !is_nan(bv); ++i) {
        T v = row[i * s];
        if (is_nan(v) || (is_max ? v > bv : v < bv)) {
          bv = v;
          best = i;
        }
      }
      y[out.offset(o)] = best;
    }
  });
}

}  // namespace

void CpuBackend::reduce(ReduceOp op, const View& dst, const View& src, uint64_t mask) {
  visit_dtype(src.dtype, [&]<class T>() {
    switch (op) {
      case ReduceOp::Sum:
        return reduce_typed<ReduceOp::Sum, T>(dst, src, mask);
      case ReduceOp::Prod:
        return reduce_typed<ReduceOp::Prod, T>(dst, src, mask);
      case ReduceOp::Max:
        return reduce_typed<ReduceOp::Max, T>(dst, src, mask);
      case ReduceOp::Min:
        return reduce_typed<ReduceOp::Min, T>(dst, src, mask);
      case ReduceOp::ArgMax:
        return arg_reduce_typed<true, T>(dst, src, mask);
      case ReduceOp::ArgMin:
        return arg_reduce_typed<false, T>(dst, src, mask);
    }
  });
}

}  // namespace ember
