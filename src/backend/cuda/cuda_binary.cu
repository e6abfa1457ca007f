// backend/cuda/cuda_binary.cu: binary element-wise kernels and where, instantiated from
// kernels/binary_ops.def and kernels/scalar_math.h. Contiguous operands take a vectorized kernel,
// broadcast and strided ones the generic strided kernel.
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/scalar_math.h"

namespace ember::cuda_detail {

namespace {

template <class T, class Out, int V, class F>
__global__ void binary_contiguous(Out* out, const T* a, const T* b, int64_t n, F f) {
  int64_t tid = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t nv = n / V;
  const auto* va = reinterpret_cast<const Vec<T, V>*>(a);
  const auto* vb = reinterpret_cast<const Vec<T, V>*>(b);
  auto* vout = reinterpret_cast<Vec<Out, V>*>(out);
  for (int64_t i = tid; i < nv; i += stride) {
    Vec<T, V> x = va[i], y = vb[i];
    Vec<Out, V> z;
#pragma unroll
    for (int k = 0; k < V; ++k) z.v[k] = f(x.v[k], y.v[k]);
    vout[i] = z;
  }
  for (int64_t i = nv * V + tid; i < n; i += stride) out[i] = f(a[i], b[i]);
}

template <class T, class Out, class F>
__global__ void binary_strided(Out* out, const T* a, const T* b, OffsetCalc<3> oc, int64_t n, F f) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    int64_t off[3];
    oc.offsets(i, off);
    out[off[0]] = f(a[off[1]], b[off[2]]);
  }
}

template <class T>
__global__ void where_strided(T* out, const bool* cond, const T* a, const T* b, OffsetCalc<4> oc,
                              int64_t n) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    int64_t off[4];
    oc.offsets(i, off);
    out[off[0]] = cond[off[1]] ? a[off[2]] : b[off[3]];
  }
}

// f runs on the compute type (float for the 16-bit floating types), its result stored as Out.
template <class F, class T>
void binary_typed(const View& dst, const View& va, const View& vb, const F& fn) {
  using Out = math::binary_out_t<F, T>;
  const math::OpMathBinary<F, T> f{fn};
  int64_t n = dst.numel();
  if (n == 0) return;
  constexpr int V = 16 / sizeof(T);
  OffsetCalc<3> oc = make_offset_calc<3>({&dst, &va, &vb});
  Out* out = static_cast<Out*>(dst.data);
  const T* a = static_cast<const T*>(va.data);
  const T* b = static_cast<const T*>(vb.data);
  cudaStream_t stream = current_stream();
  if (oc.all_contiguous() && aligned_to(out, sizeof(Out) * V) && aligned_to(a, sizeof(T) * V) &&
      aligned_to(b, sizeof(T) * V))
    EMBER_CUDA_LAUNCH(blocks_for((n + V - 1) / V), kThreads, 0, stream,
                      binary_contiguous<T, Out, V>)
    (out, a, b, n, f);
  else
    EMBER_CUDA_LAUNCH(blocks_for(n), kThreads, 0, stream, binary_strided<T, Out>)
    (out, a, b, oc, n, f);
  EMBER_CUDA_CHECK_LAUNCH("binary kernel");
}

}  // namespace

void launch_binary(BinaryOp op, const View& dst, const View& a, const View& b) {
  switch (op) {
#define EMBER_BINARY(Name, name, Fn, kind, ...)                                                \
  case BinaryOp::Name:                                                                         \
    dispatch_kind<OpKind::kind>(                                                               \
        a.dtype, #name, [&]<class T>() { binary_typed<math::Fn, T>(dst, a, b, math::Fn{}); }); \
    return;
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
  }
}

void launch_where(const View& dst, const View& cond, const View& a, const View& b) {
  int64_t n = dst.numel();
  if (n == 0) return;
  OffsetCalc<4> oc = make_offset_calc<4>({&dst, &cond, &a, &b});
  visit_dtype(dst.dtype, [&]<class T>() {
    EMBER_CUDA_LAUNCH(blocks_for(n), kThreads, 0, current_stream(), where_strided<T>)
    (static_cast<T*>(dst.data), static_cast<const bool*>(cond.data), static_cast<const T*>(a.data),
     static_cast<const T*>(b.data), oc, n);
    EMBER_CUDA_CHECK_LAUNCH("where kernel");
  });
}

}  // namespace ember::cuda_detail
