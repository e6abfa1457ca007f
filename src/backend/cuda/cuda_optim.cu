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

// blockIdx.y picks the parameter; a grid-stride loop over its elements.
template <class T>
__global__ void sgd_kernel(SgdStep s, TensorList<T> list) {
  int t = blockIdx.y;
  int64_t n = list.numel[t];
  T* p = list.param[t];
  const T* g = list.grad[t];
  T* buf = list.state1[t];
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const optim_update::SgdCoeffs<T> c(s);
  for (int64_t i = first; i < n; i += stride) {
    if (s.momentum != 0)
      optim_update::sgd<true>(s, c, p[i], g[i], buf + i);
    else
      optim_update::sgd<false>(s, c, p[i], g[i], static_cast<T*>(nullptr));
  }
}

template <class T>
__global__ void adam_kernel(AdamStep s, TensorList<T> list) {
  int t = blockIdx.y;
  int64_t n = list.numel[t];
  T* p = list.param[t];
  const T* g = list.grad[t];
  T* vmax = list.state3[t];
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const optim_update::AdamCoeffs<T> c(s);
  for (int64_t i = first; i < n; i += stride) {
    if (s.amsgrad)
      optim_update::adam<true>(s, c, p[i], g[i], list.state1[t][i], list.state2[t][i], vmax + i);
    else
      optim_update::adam<false>(s, c, p[i], g[i], list.state1[t][i], list.state2[t][i],
                                static_cast<T*>(nullptr));
  }
}

// The parameters `which` (one dtype T) in launches of up to kTensorsPerLaunch: check(list, k)
// validates entry k's state, launch(grid, list) runs the kernel on the current stream.
template <class T, class Check, class Launch>
void step_typed(const std::vector<size_t>& which, std::span<const View> params,
                std::span<const View> grads, std::span<const View> state1,
                std::span<const View> state2, std::span<const View> state3, const Check& check,
                const Launch& launch) {
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
      check(list, count);
      max_n = std::max(max_n, list.numel[count]);
      ++count;
    }
    if (max_n == 0) continue;
    launch(dim3(std::min(blocks_for(max_n), 1024u), static_cast<unsigned>(count)), list);
    EMBER_CUDA_CHECK_LAUNCH("optimizer step kernel");
  }
}

// Splits the parameters by dtype (float32, float64) and runs step_typed<T> on each part.
template <class Run>
void by_dtype(std::span<const View> params, const Run& run) {
  std::vector<size_t> f32, f64;
  for (size_t i = 0; i < params.size(); ++i) {
    check_float32_or_64(params[i].dtype, "optimizer step");
    (params[i].dtype == kFloat32 ? f32 : f64).push_back(i);
  }
  if (!f32.empty()) run.template operator()<float>(f32);
  if (!f64.empty()) run.template operator()<double>(f64);
}

}  // namespace

void launch_sgd_step(const SgdStep& s, std::span<const View> params, std::span<const View> grads,
                     std::span<const View> momentum_buffers) {
  cudaStream_t stream = current_stream();
  by_dtype(params, [&]<class T>(const std::vector<size_t>& which) {
    step_typed<T>(
        which, params, grads, momentum_buffers, {}, {},
        [&](const TensorList<T>& list, int k) {
          EMBER_CHECK_KIND(Value, s.momentum == 0 || list.state1[k],
                           "[optimizer step] cuda: SGD with momentum needs a momentum buffer");
        },
        [&](dim3 grid, const TensorList<T>& list) {
          EMBER_CUDA_LAUNCH(grid, kThreads, 0, stream, sgd_kernel<T>)(s, list);
        });
  });
}

void launch_adam_step(const AdamStep& s, std::span<const View> params, std::span<const View> grads,
                      std::span<const View> exp_avgs, std::span<const View> exp_avg_sqs,
                      std::span<const View> max_exp_avg_sqs) {
  cudaStream_t stream = current_stream();
  by_dtype(params, [&]<class T>(const std::vector<size_t>& which) {
    step_typed<T>(
        which, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
        [&](const TensorList<T>& list, int k) {
          EMBER_CHECK_KIND(Value, list.state1[k] && list.state2[k],
                           "[optimizer step] cuda: Adam needs exp_avg and exp_avg_sq state");
          EMBER_CHECK_KIND(Value, !s.amsgrad || list.state3[k],
                           "[optimizer step] cuda: amsgrad needs max_exp_avg_sq state");
        },
        [&](dim3 grid, const TensorList<T>& list) {
          EMBER_CUDA_LAUNCH(grid, kThreads, 0, stream, adam_kernel<T>)(s, list);
        });
  });
}

}  // namespace ember::cuda_detail
