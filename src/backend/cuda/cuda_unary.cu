// backend/cuda/cuda_unary.cu: unary element-wise kernels, instantiated from kernels/unary_ops.def
// and the functors of kernels/scalar_math.h (the same ones the CPU runs). Contiguous operands take
// a vectorized kernel (16-byte loads), everything else one generic strided kernel.
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/scalar_math.h"

namespace ember::cuda_detail {

namespace {

template <class T, class Out, int V, class F>
__global__ void unary_contiguous(Out* out, const T* in, int64_t n, F f) {
  int64_t tid = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t nv = n / V;
  const auto* vin = reinterpret_cast<const Vec<T, V>*>(in);
  auto* vout = reinterpret_cast<Vec<Out, V>*>(out);
  for (int64_t i = tid; i < nv; i += stride) {
    Vec<T, V> x = vin[i];
    Vec<Out, V> y;
#pragma unroll
    for (int k = 0; k < V; ++k) y.v[k] = f(x.v[k]);
    vout[i] = y;
  }
  for (int64_t i = nv * V + tid; i < n; i += stride) out[i] = f(in[i]);
}

template <class T, class Out, class F>
__global__ void unary_strided(Out* out, const T* in, OffsetCalc<2> oc, int64_t n, F f) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    int64_t off[2];
    oc.offsets(i, off);
    out[off[0]] = f(in[off[1]]);
  }
}

// f runs on the compute type (float for the 16-bit floating types), its result stored as Out.
template <class F, class T>
void unary_typed(const View& dst, const View& src, const F& fn) {
  using Out = math::unary_out_t<F, T>;
  const math::OpMathUnary<F, T> f{fn};
  int64_t n = dst.numel();
  if (n == 0) return;
  constexpr int V = 16 / sizeof(T);
  OffsetCalc<2> oc = make_offset_calc<2>({&dst, &src});
  Out* out = static_cast<Out*>(dst.data);
  const T* in = static_cast<const T*>(src.data);
  cudaStream_t stream = current_stream();
  if (oc.all_contiguous() && aligned_to(out, sizeof(Out) * V) && aligned_to(in, sizeof(T) * V))
    EMBER_CUDA_LAUNCH(blocks_for((n + V - 1) / V), kThreads, 0, stream, unary_contiguous<T, Out, V>)
    (out, in, n, f);
  else
    EMBER_CUDA_LAUNCH(blocks_for(n), kThreads, 0, stream, unary_strided<T, Out>)(out, in, oc, n, f);
  EMBER_CUDA_CHECK_LAUNCH("unary kernel");
}

}  // namespace

void launch_unary(UnaryOp op, const View& dst, const View& src, const UnaryParams& p) {
  switch (op) {
#define EMBER_UNARY(Name, name, Fn, kind, ...)                                                    \
  case UnaryOp::Name:                                                                             \
    dispatch_kind<OpKind::kind>(                                                                  \
        src.dtype, #name, [&]<class T>() { unary_typed<math::Fn, T>(dst, src, math::Fn{{p}}); }); \
    return;
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
  }
}

}  // namespace ember::cuda_detail
