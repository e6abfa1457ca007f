// backend/cpu/cpu_index.cpp: index_select, gather and scatter_add on the CPU.
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

void CpuBackend::scatter_add(const View& dst, int64_t dim, const View& index, const View& src) {
  visit_dtype(dst.dtype, [&]<class T>() {
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
