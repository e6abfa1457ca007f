// backend/cpu/cpu_index.cpp: index_select, gather and scatter_add on the CPU.
#include <algorithm>
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"

namespace ember {

namespace {

// Visits every position of `shape` (row-major), passing the linear index and the coordinates.
template <class F>
void for_each_position(std::span<const int64_t> shape, int64_t begin, int64_t end, F&& f) {
  int nd = static_cast<int>(shape.size());
  int64_t coord[cpu::kMaxDims] = {};
  int64_t rem = begin;
  for (int d = nd - 1; d >= 0; --d) {
    coord[d] = rem % shape[d];
    rem /= shape[d];
  }
  for (int64_t i = begin; i < end; ++i) {
    f(i, coord);
    for (int d = nd - 1; d >= 0; --d) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
}

int64_t index_at(const View& index, const int64_t* coord) {
  int64_t off = 0;
  for (size_t d = 0; d < index.sizes.size(); ++d) off += coord[d] * index.strides[d];
  return static_cast<const int64_t*>(index.data)[off];
}

}  // namespace

void CpuBackend::index_select(const View& dst, const View& src, int64_t dim, const View& index) {
  // src is contiguous: copy `inner` elements per (outer, selected index) pair.
  size_t es = element_size(src.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= src.sizes[d];
  for (size_t d = dim + 1; d < src.sizes.size(); ++d) inner *= src.sizes[d];
  int64_t n_src = src.sizes.empty() ? 1 : src.sizes[dim];
  int64_t n_idx = index.numel();
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  int64_t idx_stride = index.strides.empty() ? 0 : index.strides[0];
  const char* s = static_cast<const char*>(src.data);
  char* o = static_cast<char*>(dst.data);
  cpu::parallel_for(outer * n_idx,
                    std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(inner, 1)),
                    [&](int64_t b, int64_t e) {
                      for (int64_t r = b; r < e; ++r) {
                        int64_t i = r / n_idx, j = r % n_idx;
                        std::memcpy(o + r * inner * es,
                                    s + (i * n_src + idx[j * idx_stride]) * inner * es, inner * es);
                      }
                    });
}

void CpuBackend::gather(const View& dst, const View& src, int64_t dim, const View& index) {
  size_t es = element_size(src.dtype);
  const char* s = static_cast<const char*>(src.data);
  char* o = static_cast<char*>(dst.data);
  int64_t nd = static_cast<int64_t>(index.sizes.size());
  cpu::parallel_for(index.numel(), cpu::kGrainSize, [&](int64_t b, int64_t e) {
    for_each_position(index.sizes, b, e, [&](int64_t i, const int64_t* coord) {
      int64_t off = 0;
      for (int64_t d = 0; d < nd; ++d)
        off += (d == dim ? index_at(index, coord) : coord[d]) * src.strides[d];
      std::memcpy(o + i * es, s + off * es, es);
    });
  });
}

namespace {

bool contiguous(const View& v) {
  int64_t expect = 1;
  for (size_t d = v.sizes.size(); d-- > 0;) {
    if (v.sizes[d] != 1 && v.strides[d] != expect) return false;
    expect *= v.sizes[d];
  }
  return true;
}

// index_add's pattern: dst and src contiguous, index broadcast (stride 0) along every dim but
// `dim`. Adds rows of `inner` elements; threads split the outer blocks, or when there is one,
// the destination rows (each thread scans every index and adds those in its range, so the order
// of additions per element stays the index order).
template <class T>
bool scatter_add_rows(const View& dst, int64_t dim, const View& index, const View& src) {
  const int64_t nd = static_cast<int64_t>(index.sizes.size());
  if (!contiguous(dst) || !contiguous(src) || !std::ranges::equal(src.sizes, index.sizes))
    return false;
  for (int64_t d = 0; d < nd; ++d)
    if (d != dim && index.strides[d] != 0) return false;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= src.sizes[d];
  for (int64_t d = dim + 1; d < nd; ++d) inner *= src.sizes[d];
  const int64_t n = src.sizes[dim], rows = dst.sizes[dim], istride = index.strides[dim];
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  T* o = static_cast<T*>(dst.data);
  const T* s = static_cast<const T*>(src.data);
  auto add_row = [&](int64_t block, int64_t j) {
    T* to = o + (block * rows + idx[j * istride]) * inner;
    const T* from = s + (block * n + j) * inner;
    for (int64_t k = 0; k < inner; ++k) {
      if constexpr (std::is_same_v<T, bool>)
        to[k] = to[k] || from[k];
      else
        to[k] = static_cast<T>(to[k] + from[k]);
    }
  };
  const int64_t work = outer * n * inner;
  if (outer > 1) {
    cpu::parallel_for(outer,
                      std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n * inner, 1)),
                      [&](int64_t b, int64_t e) {
                        for (int64_t block = b; block < e; ++block)
                          for (int64_t j = 0; j < n; ++j) add_row(block, j);
                      });
    return true;
  }
  cpu::parallel_for(rows, work > cpu::kGrainSize ? 1 : rows, [&](int64_t b, int64_t e) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t r = idx[j * istride];
      if (r >= b && r < e) add_row(0, j);
    }
  });
  return true;
}

}  // namespace

void CpuBackend::scatter_add(const View& dst, int64_t dim, const View& index, const View& src) {
  visit_dtype(dst.dtype, [&]<class T>() {
    if (scatter_add_rows<T>(dst, dim, index, src)) return;
    T* o = static_cast<T*>(dst.data);
    const T* s = static_cast<const T*>(src.data);
    int64_t nd = static_cast<int64_t>(index.sizes.size());
    for_each_position(index.sizes, 0, index.numel(), [&](int64_t, const int64_t* coord) {
      int64_t off_dst = 0, off_src = 0;
      for (int64_t d = 0; d < nd; ++d) {
        off_dst += (d == dim ? index_at(index, coord) : coord[d]) * dst.strides[d];
        off_src += coord[d] * src.strides[d];
      }
      if constexpr (std::is_same_v<T, bool>)
        o[off_dst] = o[off_dst] || s[off_src];
      else
        o[off_dst] = static_cast<T>(o[off_dst] + s[off_src]);
    });
  });
}

}  // namespace ember
