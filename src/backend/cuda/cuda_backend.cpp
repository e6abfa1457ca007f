// backend/cuda/cuda_backend.cpp: the CUDA runtime side of the CUDA backend -- device discovery,
// memory, and host<->device copies through the CUDA runtime API. The compute kernels (element-wise,
// reductions, cuBLAS matmul, ...) are not written yet: those entry points throw a clear
// NotImplemented error instead of computing.
#include <cuda_runtime_api.h>

#include <mutex>

#include "core/backend.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember {

namespace {

void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear the sticky-free error state
  if (err == cudaErrorMemoryAllocation)
    EMBER_THROW(OutOfMemory, "[", what, "] CUDA out of memory (", cudaGetErrorName(err), ")");
  EMBER_THROW(Cuda, "[", what, "] CUDA error ", cudaGetErrorName(err), ": ",
              cudaGetErrorString(err));
}

// Makes `index` the current device for the lifetime of the guard.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index) {
    cudaGetDevice(&previous_);
    if (index >= 0 && index != previous_) check(cudaSetDevice(index), "cudaSetDevice");
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

[[noreturn]] void no_kernels(const char* family) {
  EMBER_THROW(NotImplemented, "[cuda] ", family,
              " kernels are not part of this build yet: ember's "
              "CUDA backend currently moves and stores tensors but computes nothing on the GPU. "
              "Run this op on the CPU (tensor.cpu()) until the CUDA kernels land.");
}

class CudaBackend : public Backend {
 public:
  int device_count() override {
    std::call_once(count_once_, [this] {
      int n = 0;
      cudaError_t err = cudaGetDeviceCount(&n);  // no driver or no GPU: an error, not a crash
      if (err != cudaSuccess) {
        cudaGetLastError();
        n = 0;
      }
      count_ = n;
    });
    return count_;
  }
  std::string device_name(int index) override {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, index), "cuda::get_device_name");
    return prop.name;
  }
  void* allocate(size_t nbytes, int index) override {
    if (nbytes == 0) return nullptr;
    DeviceGuard guard(index);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free_bytes = 0, total = 0;
      cudaMemGetInfo(&free_bytes, &total);
      EMBER_THROW(OutOfMemory, "CUDA out of memory. Tried to allocate ", nbytes / 1048576.0,
                  " MiB (GPU ", index, "; ", total / 1073741824.0, " GiB total capacity; ",
                  free_bytes / 1073741824.0, " GiB free)");
    }
    check(err, "cudaMalloc");
    return p;
  }
  void deallocate(void* ptr, size_t, int index) override {
    if (!ptr) return;
    DeviceGuard guard(index);
    cudaFree(ptr);
  }
  void copy(const View& dst, const View& src) override {
    bool dense = dst.dtype == src.dtype && is_dense(dst) && is_dense(src);
    if (!dense) no_kernels("strided or dtype-converting copy");
    check(cudaMemcpy(dst.data, src.data, dst.numel() * element_size(dst.dtype),
                     cudaMemcpyDeviceToDevice),
          "copy");
  }
  void copy_from_host(void* dst, const void* src, size_t nbytes, int index, bool) override {
    DeviceGuard guard(index);
    check(cudaMemcpy(dst, src, nbytes, cudaMemcpyHostToDevice), "copy host->cuda");
  }
  void copy_to_host(void* dst, const void* src, size_t nbytes, int index, bool) override {
    DeviceGuard guard(index);
    check(cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToHost), "copy cuda->host");
  }
  void fill(const View& dst, const Scalar& value) override {
    if (!(is_dense(dst) && value.to_double() == 0)) no_kernels("fill");
    check(cudaMemset(dst.data, 0, dst.numel() * element_size(dst.dtype)), "fill");
  }
  void unary(UnaryOp, const View&, const View&, const UnaryParams&) override {
    no_kernels("unary");
  }
  void binary(BinaryOp, const View&, const View&, const View&) override { no_kernels("binary"); }
  void where(const View&, const View&, const View&, const View&) override { no_kernels("where"); }
  void reduce(ReduceOp, const View&, const View&, uint64_t) override { no_kernels("reduction"); }
  void matmul(const View&, const View&, const View&) override { no_kernels("matmul"); }
  void softmax(const View&, const View&, int64_t, bool) override { no_kernels("softmax"); }
  void im2col(const View&, const View&, const Conv2dGeometry&) override { no_kernels("im2col"); }
  void col2im(const View&, const View&, const Conv2dGeometry&) override { no_kernels("col2im"); }
  void index_select(const View&, const View&, int64_t, const View&) override {
    no_kernels("index_select");
  }
  void gather(const View&, const View&, int64_t, const View&) override { no_kernels("gather"); }
  void scatter_add(const View&, int64_t, const View&, const View&) override {
    no_kernels("scatter_add");
  }
  void random(RandomKind, const View&, uint64_t, uint64_t, double, double) override {
    no_kernels("random");
  }
  void optimizer_step(const OptimizerStep&, std::span<const View>, std::span<const View>,
                      std::span<const View>, std::span<const View>,
                      std::span<const View>) override {
    no_kernels("optimizer step");
  }
  void synchronize(int index) override {
    DeviceGuard guard(index);
    check(cudaDeviceSynchronize(), "cuda::synchronize");
  }

 private:
  static bool is_dense(const View& v) {
    int64_t expected = 1;
    for (size_t i = v.sizes.size(); i-- > 0;) {
      if (v.sizes[i] == 1) continue;
      if (v.strides[i] != expected) return false;
      expected *= v.sizes[i];
    }
    return true;
  }
  std::once_flag count_once_;
  int count_ = 0;
};

}  // namespace

Backend* cuda_backend() {
  static CudaBackend backend;
  return &backend;
}

namespace cuda {
bool is_built() {
  return true;
}
}  // namespace cuda

}  // namespace ember
