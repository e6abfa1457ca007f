// backend/cuda/cuda_optim.cu: fused multi-tensor SGD and Adam/AdamW steps. One launch updates up
// to kTensorsPerLaunch parameters of one dtype (blockIdx.y picks the parameter), with the CPU's
// per-element updates (kernels/optim_update.h).
#include <cmath>
#include <vector>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/optim_update.h"

namespace ember::cuda_detail {

namespace {

constexpr int kTensorsPerLaunch = 32;

template <class T>
struct TensorList {
  T* param[kTensorsPerLaunch];
  const T* grad[kTensorsPerLaunch];
  T* state1[kTensorsPerLaunch];
  T* state2[kTensorsPerLaunch];
  T* state3[kTensorsPerLaunch];
  int64_t numel[kTensorsPerLaunch];
};

template <class T>
__global__ void optimizer_kernel(OptimizerStep s, TensorList<T> list) {
  int t = blockIdx.y;
  int64_t n = list.numel[t];
  T* p = list.param[t];
  const T* g = list.grad[t];
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (s.kind == OptimizerKind::SGD) {
    const optim_update::SgdCoeffs<T> c(s);
    T* buf = list.state1[t];
    for (int64_t i = first; i < n; i += stride) {
      if (s.momentum != 0)
        optim_update::sgd<true>(s, c, p[i], g[i], buf + i);
      else
        optim_update::sgd<false>(s, c, p[i], g[i], static_cast<T*>(nullptr));
    }
  } else {
    const optim_update::AdamCoeffs<T> c(s);
    T* vmax = list.state3[t];
    for (int64_t i = first; i < n; i += stride) {
      if (s.amsgrad)
        optim_update::adam<true>(s, c, p[i], g[i], list.state1[t][i], list.state2[t][i], vmax + i);
      else
        optim_update::adam<false>(s, c, p[i], g[i], list.state1[t][i], list.state2[t][i],
                                  static_cast<T*>(nullptr));
    }
  }
}

template <class T>
void step_typed(const OptimizerStep& s, const std::vector<size_t>& which,
                std::span<const View> params, std::span<const View> grads,
                std::span<const View> state1, std::span<const View> state2,
                std::span<const View> state3) {
  cudaStream_t stream = current_stream();
  auto state = [](std::span<const View> st, size_t i) {
    return i < st.size() ? static_cast<T*>(st[i].data) : nullptr;
  };
  for (size_t begin = 0; begin < which.size(); begin += kTensorsPerLaunch) {
    TensorList<T> list{};
    int count = 0;
    int64_t max_n = 0;
    for (size_t k = begin; k < which.size() && count < kTensorsPerLaunch; ++k) {
      size_t i = which[k];
      list.param[count] = static_cast<T*>(params[i].data);
      list.grad[count] = static_cast<const T*>(grads[i].data);
      list.state1[count] = state(state1, i);
      list.state2[count] = state(state2, i);
      list.state3[count] = state(state3, i);
      list.numel[count] = params[i].numel();
      EMBER_CHECK_KIND(Value,
                       s.kind == OptimizerKind::SGD || (list.state1[count] && list.state2[count]),
                       "[optimizer step] cuda: Adam needs exp_avg and exp_avg_sq state");
      EMBER_CHECK_KIND(Value,
                       !(s.kind == OptimizerKind::SGD && s.momentum != 0) || list.state1[count],
                       "[optimizer step] cuda: SGD with momentum needs a momentum buffer");
      EMBER_CHECK_KIND(Value, !(s.kind == OptimizerKind::Adam && s.amsgrad) || list.state3[count],
                       "[optimizer step] cuda: amsgrad needs max_exp_avg_sq state");
      max_n = std::max(max_n, list.numel[count]);
      ++count;
    }
    if (max_n == 0) continue;
    dim3 grid(std::min(blocks_for(max_n), 1024u), static_cast<unsigned>(count));
    optimizer_kernel<T><<<grid, kThreads, 0, stream>>>(s, list);
    EMBER_CUDA_CHECK_LAUNCH("optimizer step kernel");
  }
}

}  // namespace

void launch_optimizer_step(const OptimizerStep& s, std::span<const View> params,
                           std::span<const View> grads, std::span<const View> state1,
                           std::span<const View> state2, std::span<const View> state3) {
  std::vector<size_t> f32, f64;
  for (size_t i = 0; i < params.size(); ++i) {
    EMBER_CHECK_KIND(DType, is_floating_point(params[i].dtype),
                     "[optimizer step] cuda: parameters must be float32 or float64, got ",
                     params[i].dtype);
    (params[i].dtype == kFloat32 ? f32 : f64).push_back(i);
  }
  if (!f32.empty()) step_typed<float>(s, f32, params, grads, state1, state2, state3);
  if (!f64.empty()) step_typed<double>(s, f64, params, grads, state1, state2, state3);
}

}  // namespace ember::cuda_detail
