// backend/cuda/cuda_index.cu: index_select, gather and scatter_add. One thread per output (or
// per index entry); scatter_add accumulates with atomics, so float results may differ in the last
// bits between runs when indices repeat (it is not deterministic, as in PyTorch).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

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

// Whether the architecture compiled for adds 16-bit floats atomically itself: float16 from sm_70,
// bfloat16 from sm_80 (the host pass never runs device code, so it may say no).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
constexpr bool kNativeHalfAdd = true, kNativeBFloat16Add = true;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
constexpr bool kNativeHalfAdd = true, kNativeBFloat16Add = false;
#else
constexpr bool kNativeHalfAdd = false, kNativeBFloat16Add = false;
#endif

// v added to the 1- or 2-byte value at `address` by a compare-and-swap of the aligned 32-bit word
// that holds it: bool adds as "or", the 16-bit floats in float, rounded once.
template <class T>
__device__ void atomic_add_narrow(T* address, T v) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2);
  using Bits = std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>;
  auto addr = reinterpret_cast<uintptr_t>(address);
  auto* word = reinterpret_cast<unsigned*>(addr & ~uintptr_t{3});
  const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
  const unsigned field = static_cast<unsigned>(static_cast<Bits>(~Bits{0})) << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    const auto bits = static_cast<Bits>(assumed >> shift);
    T cur;
    memcpy(&cur, &bits, sizeof(T));
    T next;
    if constexpr (std::is_same_v<T, bool>)
      next = cur || v;
    else if constexpr (is_reduced_float_v<T>)
      next = T(static_cast<float>(cur) + static_cast<float>(v));
    else
      next = static_cast<T>(cur + v);
    Bits next_bits;
    memcpy(&next_bits, &next, sizeof(T));
    const unsigned updated = (assumed & ~field) | (static_cast<unsigned>(next_bits) << shift);
    old = atomicCAS(word, assumed, updated);
  } while (old != assumed);
}

// atomicAdd for every dtype: native for the 32/64-bit types and for the 16-bit floats where the
// architecture has it, atomic_add_narrow otherwise.
template <class T>
__device__ void atomic_add(T* address, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                std::is_same_v<T, int32_t>) {
    atomicAdd(address, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(v));
  } else if constexpr (std::is_same_v<T, Half> && kNativeHalfAdd) {
    atomicAdd(reinterpret_cast<__half*>(address), __ushort_as_half(v.x));
  } else if constexpr (std::is_same_v<T, BFloat16> && kNativeBFloat16Add) {
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(address), __ushort_as_bfloat16(v.x));
  } else {
    atomic_add_narrow(address, v);
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
    case 2:
      return f.template operator()<uint16_t>();
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
    EMBER_CUDA_LAUNCH(blocks_for(total), kThreads, 0, current_stream(), index_select_kernel<U>)
    (static_cast<U*>(dst.data), static_cast<const U*>(src.data),
     static_cast<const int64_t*>(index.data), idx_stride, n_idx, n_src, inner, total);
    EMBER_CUDA_CHECK_LAUNCH("index_select kernel");
  });
}

void launch_gather(const View& dst, const View& src, int64_t dim, const View& index) {
  int64_t total = index.numel();
  if (total == 0) return;
  IndexGeometry g = make_geometry(index, dim, src, nullptr);
  visit_bits(src.dtype, [&]<class U>() {
    EMBER_CUDA_LAUNCH(blocks_for(total), kThreads, 0, current_stream(), gather_kernel<U>)
    (static_cast<U*>(dst.data), static_cast<const U*>(src.data),
     static_cast<const int64_t*>(index.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("gather kernel");
  });
}

void launch_scatter_add(const View& dst, int64_t dim, const View& index, const View& src) {
  int64_t total = index.numel();
  if (total == 0) return;
  IndexGeometry g = make_geometry(index, dim, dst, &src);
  visit_dtype(dst.dtype, [&]<class T>() {
    EMBER_CUDA_LAUNCH(blocks_for(total), kThreads, 0, current_stream(), scatter_add_kernel<T>)
    (static_cast<T*>(dst.data), static_cast<const T*>(src.data),
     static_cast<const int64_t*>(index.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("scatter_add kernel");
  });
}

}  // namespace ember::cuda_detail
