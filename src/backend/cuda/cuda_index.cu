// backend/cuda/cuda_index.cu: index_select, gather and scatter_add. One thread per output (or
// per index entry); scatter_add accumulates with atomics, so float results may differ in the last
// bits between runs when indices repeat (it is not deterministic, as in PyTorch).
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"

namespace ember::cuda_detail {

namespace {

// The shape an index op walks (the index's), with the strides of the tensors it touches.
struct IndexGeometry {
  int ndim = 0;
  int dim = 0;
  int64_t sizes[kMaxDims];
  int64_t index_strides[kMaxDims];
  int64_t a_strides[kMaxDims];  // gather: src; scatter_add: dst
  int64_t b_strides[kMaxDims];  // scatter_add: src
};

IndexGeometry make_geometry(const View& index, int64_t dim, const View& a, const View* b) {
  IndexGeometry g;
  g.ndim = static_cast<int>(index.sizes.size());
  EMBER_CHECK_KIND(Shape, g.ndim <= kMaxDims, "[cuda index op] more than ", kMaxDims, " dims");
  g.dim = static_cast<int>(dim);
  for (int d = 0; d < g.ndim; ++d) {
    g.sizes[d] = index.sizes[d];
    g.index_strides[d] = index.strides[d];
    g.a_strides[d] = a.strides[d];
    g.b_strides[d] = b ? b->strides[d] : 0;
  }
  return g;
}

template <class U>
__global__ void index_select_kernel(U* out, const U* src, const int64_t* idx, int64_t idx_stride,
                                    int64_t n_idx, int64_t n_src, int64_t inner, int64_t total) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += stride) {
    int64_t k = e % inner, r = e / inner, j = r % n_idx, i = r / n_idx;
    out[e] = src[(i * n_src + idx[j * idx_stride]) * inner + k];
  }
}

template <class U>
__global__ void gather_kernel(U* out, const U* src, const int64_t* idx, IndexGeometry g,
                              int64_t total) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += stride) {
    int64_t rem = e, off_idx = 0, coord[kMaxDims];
    for (int d = g.ndim - 1; d >= 0; --d) {
      coord[d] = rem % g.sizes[d];
      rem /= g.sizes[d];
      off_idx += coord[d] * g.index_strides[d];
    }
    int64_t off = 0;
    for (int d = 0; d < g.ndim; ++d) off += (d == g.dim ? idx[off_idx] : coord[d]) * g.a_strides[d];
    out[e] = src[off];
  }
}

// atomicAdd for every dtype: native for 32/64-bit types, a compare-and-swap on the enclosing
// 32-bit word for the 1-byte ones (bool adds as "or").
template <class T>
__device__ void atomic_add(T* address, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                std::is_same_v<T, int32_t>) {
    atomicAdd(address, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(v));
  } else {
    auto addr = reinterpret_cast<uintptr_t>(address);
    auto* word = reinterpret_cast<unsigned*>(addr & ~uintptr_t{3});
    unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      auto cur = static_cast<uint8_t>(assumed >> shift);
      uint8_t next;
      if constexpr (std::is_same_v<T, bool>)
        next = static_cast<uint8_t>(cur || v);
      else
        next = static_cast<uint8_t>(cur + v);
      unsigned updated = (assumed & ~(0xFFu << shift)) | (static_cast<unsigned>(next) << shift);
      old = atomicCAS(word, assumed, updated);
    } while (old != assumed);
  }
}

template <class T>
__global__ void scatter_add_kernel(T* dst, const T* src, const int64_t* idx, IndexGeometry g,
                                   int64_t total) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += stride) {
    int64_t rem = e, off_idx = 0, off_src = 0, coord[kMaxDims];
    for (int d = g.ndim - 1; d >= 0; --d) {
      coord[d] = rem % g.sizes[d];
      rem /= g.sizes[d];
      off_idx += coord[d] * g.index_strides[d];
      off_src += coord[d] * g.b_strides[d];
    }
    int64_t off_dst = 0;
    for (int d = 0; d < g.ndim; ++d)
      off_dst += (d == g.dim ? idx[off_idx] : coord[d]) * g.a_strides[d];
    atomic_add(dst + off_dst, src[off_src]);
  }
}

// Calls f.template operator()<U>() with U an unsigned type of the dtype's size (a raw copy).
template <class F>
void visit_bits(DType t, F&& f) {
  switch (element_size(t)) {
    case 1:
      return f.template operator()<uint8_t>();
    case 4:
      return f.template operator()<uint32_t>();
    default:
      return f.template operator()<uint64_t>();
  }
}

}  // namespace

void launch_index_select(const View& dst, const View& src, int64_t dim, const View& index) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= src.sizes[d];
  for (size_t d = dim + 1; d < src.sizes.size(); ++d) inner *= src.sizes[d];
  int64_t n_src = src.sizes.empty() ? 1 : src.sizes[dim];
  int64_t n_idx = index.numel();
  int64_t total = outer * n_idx * inner;
  if (total == 0) return;
  int64_t idx_stride = index.strides.empty() ? 0 : index.strides[0];
  visit_bits(src.dtype, [&]<class U>() {
    index_select_kernel<U><<<blocks_for(total), kThreads, 0, current_stream()>>>(
        static_cast<U*>(dst.data), static_cast<const U*>(src.data),
        static_cast<const int64_t*>(index.data), idx_stride, n_idx, n_src, inner, total);
    EMBER_CUDA_CHECK_LAUNCH("index_select kernel");
  });
}

void launch_gather(const View& dst, const View& src, int64_t dim, const View& index) {
  int64_t total = index.numel();
  if (total == 0) return;
  IndexGeometry g = make_geometry(index, dim, src, nullptr);
  visit_bits(src.dtype, [&]<class U>() {
    gather_kernel<U><<<blocks_for(total), kThreads, 0, current_stream()>>>(
        static_cast<U*>(dst.data), static_cast<const U*>(src.data),
        static_cast<const int64_t*>(index.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("gather kernel");
  });
}

void launch_scatter_add(const View& dst, int64_t dim, const View& index, const View& src) {
  int64_t total = index.numel();
  if (total == 0) return;
  IndexGeometry g = make_geometry(index, dim, dst, &src);
  visit_dtype(dst.dtype, [&]<class T>() {
    scatter_add_kernel<T><<<blocks_for(total), kThreads, 0, current_stream()>>>(
        static_cast<T*>(dst.data), static_cast<const T*>(src.data),
        static_cast<const int64_t*>(index.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("scatter_add kernel");
  });
}

}  // namespace ember::cuda_detail
