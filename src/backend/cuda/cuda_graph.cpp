// backend/cuda/cuda_graph.cpp: cuda::Graph, PyTorch's CUDAGraph over cudaStreamBeginCapture /
// cudaStreamEndCapture / cudaGraphLaunch, with the caching allocator's private pool for the
// memory the captured work allocates (see ember/cuda.h).
#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_capture.h"
#include "backend/cuda/cuda_check.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember::cuda {

struct Graph::Impl {
  int device = -1;
  cudaStream_t stream = nullptr;  // the stream being captured
  bool capturing = false;
  uint64_t pool = 0;  // the allocator's private pool (0: none)
  cudaGraphExec_t exec = nullptr;

  void release() {
    if (exec) cudaGraphExecDestroy(exec);
    exec = nullptr;
    if (pool) cuda_detail::release_capture_pool(device, pool);
    pool = 0;
  }
};

Graph::Graph() : impl_(std::make_unique<Impl>()) {
  EMBER_CHECK_KIND(Device, cuda_detail::real_device_count() > 0,
                   "[cuda::Graph] CUDA graphs need a CUDA device, and no NVIDIA driver or GPU "
                   "was found");
}

Graph::~Graph() {
  try {
    if (impl_->capturing) {  // abandoned mid-capture: end it and drop what was captured
      DeviceGuard guard(impl_->device);
      cudaGraph_t g = nullptr;
      if (cudaStreamEndCapture(impl_->stream, &g) == cudaSuccess && g) cudaGraphDestroy(g);
      cudaGetLastError();
      cuda_detail::end_capture_pool(impl_->device, impl_->stream);
      impl_->capturing = false;
    }
    reset();
  } catch (...) {  // a destructor must not throw; the pool stays reserved
  }
}

void Graph::capture_begin() {
  Impl& g = *impl_;
  EMBER_CHECK_KIND(Value, !g.capturing && !g.exec,
                   "[cuda::Graph::capture_begin] this graph already holds a capture; call reset() "
                   "before capturing again");
  int device = cuda_detail::current_device();
  cudaStream_t stream = cuda_detail::current_stream(device);
  EMBER_CHECK_KIND(Value, stream != nullptr,
                   "[cuda::Graph::capture_begin] CUDA graphs must be captured on a non-default "
                   "stream; capture under cuda::StreamGuard guard(cuda::Stream::create()) (the "
                   "graph may then be replayed on any stream)");
  EMBER_CHECK_KIND(Value, cuda_detail::allocator_caches(device),
                   "[cuda::Graph::capture_begin] graph capture needs the caching allocator; unset "
                   "EMBER_CUDA_NO_CACHING");
  cuda_detail::prepare_blas(device, stream);
  g.device = device;
  g.stream = stream;
  g.pool = cuda_detail::begin_capture_pool(device, stream);
  cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  if (err != cudaSuccess) {
    cuda_detail::end_capture_pool(device, stream);
    g.release();
    EMBER_CUDA_CHECK(err, "cuda::Graph::capture_begin (cudaStreamBeginCapture)");
  }
  g.capturing = true;
}

void Graph::capture_end() {
  Impl& g = *impl_;
  EMBER_CHECK_KIND(Value, g.capturing,
                   "[cuda::Graph::capture_end] no capture in progress; call capture_begin() first");
  DeviceGuard guard(g.device);
  cudaGraph_t graph = nullptr;
  cudaError_t err = cudaStreamEndCapture(g.stream, &graph);
  cuda_detail::end_capture_pool(g.device, g.stream);
  g.capturing = false;
  if (err != cudaSuccess) {
    g.release();
    cudaGetLastError();
    EMBER_THROW(Cuda, "[cuda::Graph::capture_end] the capture failed (", cudaGetErrorName(err),
                ": ", cudaGetErrorString(err),
                "): an op in it synchronized with the host (item(), a copy to the CPU, "
                "cuda::synchronize) or used the default stream; capture only GPU work, on the "
                "stream current at capture_begin");
  }
  err = cudaGraphInstantiate(&g.exec, graph, 0);
  cudaGraphDestroy(graph);  // the executable graph keeps what it needs
  if (err != cudaSuccess) {
    g.exec = nullptr;
    g.release();
    EMBER_CUDA_CHECK(err, "cuda::Graph::capture_end (cudaGraphInstantiate)");
  }
}

void Graph::replay() {
  Impl& g = *impl_;
  EMBER_CHECK_KIND(Value, g.exec,
                   "[cuda::Graph::replay] nothing to replay; capture with capture_begin() and "
                   "capture_end() first");
  DeviceGuard guard(g.device);
  EMBER_CUDA_CHECK(cudaGraphLaunch(g.exec, cuda_detail::current_stream(g.device)),
                   "cuda::Graph::replay (cudaGraphLaunch)");
}

void Graph::reset() {
  Impl& g = *impl_;
  EMBER_CHECK_KIND(Value, !g.capturing,
                   "[cuda::Graph::reset] a capture is in progress; call capture_end() first");
  if (!g.exec && !g.pool) return;
  DeviceGuard guard(g.device);
  g.release();
}

}  // namespace ember::cuda
