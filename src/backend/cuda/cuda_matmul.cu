// backend/cuda/cuda_matmul.cu: batched matrix multiply. float32 / float64 through cuBLAS strided
// batched GEMM, reading transposed strided layouts directly and packing other layouts first;
// float32 at full precision unless set_float32_matmul_precision allows TF32 tensor cores;
// float16 / bfloat16 on tensor cores with float32 accumulation (cublasGemmStridedBatchedEx).
// Integer and bool dtypes through a plain kernel, as on the CPU.
#include <cublas_v2.h>

#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "backend/cuda/cuda_capture.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "core/matmul_precision.h"
#include "ember/cuda.h"
#include "kernels/gemm_layout.h"

namespace ember::cuda_detail {

namespace {

constexpr int kMaxDevices = 64;

void check_cublas(cublasStatus_t status, const char* op) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    EMBER_THROW(OutOfMemory, "[", op, "] cuBLAS could not allocate its workspace (",
                cublasGetStatusName(status), ")");
  EMBER_THROW(Cuda, "[", op, "] cuBLAS error ", cublasGetStatusName(status), ": ",
              cublasGetStatusString(status));
}

// cuBLAS handles are not safe to share between threads (cublasSetStream and the call that
// follows would race), so each thread takes one handle per device from a pool and gives it back
// when the thread ends. The pool and its handles live until the program ends.
struct HandlePool {
  std::mutex mutex;
  std::array<std::vector<cublasHandle_t>, kMaxDevices> idle;
};

HandlePool& handle_pool() {
  static auto* pool = new HandlePool();
  return *pool;
}

struct ThreadHandles {
  std::array<cublasHandle_t, kMaxDevices> handles{};
  ~ThreadHandles() {
    HandlePool& pool = handle_pool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    for (int d = 0; d < kMaxDevices; ++d)
      if (handles[d]) pool.idle[d].push_back(handles[d]);
  }
};

// The workspace cuBLAS uses on a stream. cublasSetStream resets a handle to cuBLAS's own default
// workspace, which all streams of the handle share -- two streams' GEMMs could then run on one
// buffer at once -- and which cuBLAS may allocate while a CUDA graph is being captured. So every
// (handle, stream) pair gets a workspace of its own from the caching allocator, kept for the
// program's life (as PyTorch does). 32 MiB on Hopper and later, 4 MiB before (cuBLAS's sizes).
void* workspace_for(cublasHandle_t handle, cudaStream_t stream, int device, size_t& nbytes) {
  static std::mutex mutex;
  static auto* workspaces = new std::map<std::pair<cublasHandle_t, cudaStream_t>, void*>();
  static std::array<size_t, kMaxDevices> sizes{};
  std::lock_guard<std::mutex> lock(mutex);
  if (!sizes[device])
    sizes[device] = cuda::get_device_properties(device).major >= 9 ? 32u << 20 : 4u << 20;
  nbytes = sizes[device];
  auto [it, inserted] = workspaces->try_emplace({handle, stream}, nullptr);
  if (inserted) {
    try {
      it->second = device_allocate(nbytes, device);
    } catch (...) {
      workspaces->erase(it);
      throw;
    }
  }
  return it->second;
}

// The calling thread's handle for `device` (current), set to run on `stream`.
cublasHandle_t handle_for(int device, cudaStream_t stream) {
  thread_local ThreadHandles mine;
  EMBER_CHECK_KIND(Device, device >= 0 && device < kMaxDevices, "[matmul] device index ", device,
                   " out of range");
  cublasHandle_t& h = mine.handles[device];
  if (!h) {
    HandlePool& pool = handle_pool();
    {
      std::lock_guard<std::mutex> lock(pool.mutex);
      if (!pool.idle[device].empty()) {
        h = pool.idle[device].back();
        pool.idle[device].pop_back();
      }
    }
    if (!h) {
      check_cublas(cublasCreate(&h), "cublasCreate");
      // Full float32 precision unless a call asks for TF32 through its compute type.
      check_cublas(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    }
  }
  check_cublas(cublasSetStream(h, stream), "cublasSetStream");
  size_t nbytes = 0;
  void* ws = workspace_for(h, stream, device, nbytes);
  check_cublas(cublasSetWorkspace(h, ws, nbytes), "cublasSetWorkspace");
  return h;
}

// cuBLAS is column-major: it computes C^T = B^T A^T, so a row-major matrix with unit column
// stride is used as is (N) and one with unit row stride transposed (T), as gemm_layout says.
cublasOperation_t op(GemmLayout l) {
  return l.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
}

template <class T>
__global__ void matmul_small(T* c, const T* a, const T* b, int64_t B, int64_t M, int64_t N,
                             int64_t K, int64_t as0, int64_t as1, int64_t as2, int64_t bs0,
                             int64_t bs1, int64_t bs2) {
  int64_t total = B * M * N;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += stride) {
    int64_t j = idx % N, m = (idx / N) % M, i = idx / (N * M);
    const T* arow = a + i * as0 + m * as1;
    const T* bcol = b + i * bs0 + j * bs2;
    T acc = 0;
    for (int64_t k = 0; k < K; ++k) {
      if constexpr (std::is_same_v<T, bool>)
        acc = acc || (arow[k * as2] && bcol[k * bs1]);
      else
        acc = static_cast<T>(acc + arow[k * as2] * bcol[k * bs1]);
    }
    c[idx] = acc;
  }
}

bool fits_int(int64_t v) {
  return v <= INT_MAX;
}

template <class T>
void gemm(cublasHandle_t h, GemmLayout la, GemmLayout lb, int64_t M, int64_t N, int64_t K,
          const T* a, int64_t sa, const T* b, int64_t sb, T* c, int64_t B) {
  [[maybe_unused]] const T one = T(1), zero = T(0);
  auto m = static_cast<int>(N), n = static_cast<int>(M), k = static_cast<int>(K);
  auto lda = static_cast<int>(la.ld), ldb = static_cast<int>(lb.ld);
  auto batch = static_cast<int>(B);
  if constexpr (is_reduced_float_v<T>) {
    // float16 / bfloat16 on tensor cores, accumulating in float32 (PyTorch's default; it also
    // allows reduced-precision reductions, which ember does not).
    const float one32 = 1, zero32 = 0;
    const cudaDataType_t t = std::is_same_v<T, Half> ? CUDA_R_16F : CUDA_R_16BF;
    check_cublas(cublasGemmStridedBatchedEx(h, op(lb), op(la), m, n, k, &one32, b, t, ldb, sb, a, t,
                                            lda, sa, &zero32, c, t, m, M * N, batch,
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "matmul (cublasGemmStridedBatchedEx, 16-bit)");
  } else if constexpr (std::is_same_v<T, float>) {
    if (float32_matmul_precision() != MatmulPrecision::Highest)
      check_cublas(
          cublasGemmStridedBatchedEx(h, op(lb), op(la), m, n, k, &one, b, CUDA_R_32F, ldb, sb, a,
                                     CUDA_R_32F, lda, sa, &zero, c, CUDA_R_32F, m, M * N, batch,
                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
          "matmul (cublasGemmStridedBatchedEx, TF32)");
    else
      check_cublas(cublasSgemmStridedBatched(h, op(lb), op(la), m, n, k, &one, b, ldb, sb, a, lda,
                                             sa, &zero, c, m, M * N, batch),
                   "matmul (cublasSgemmStridedBatched)");
  } else {
    check_cublas(cublasDgemmStridedBatched(h, op(lb), op(la), m, n, k, &one, b, ldb, sb, a, lda, sa,
                                           &zero, c, m, M * N, batch),
                 "matmul (cublasDgemmStridedBatched)");
  }
}

// Copies a strided (B, rows, cols) operand into dense scratch memory; returns its view.
View pack(const View& v, Scratch& buf, std::array<int64_t, 3>& strides) {
  strides = {v.sizes[1] * v.sizes[2], v.sizes[2], 1};
  View dense{buf.get(), v.sizes, strides, v.dtype};
  launch_copy(dense, v);
  return dense;
}

template <class T>
void matmul_float(const View& dst, const View& a, const View& b) {
  int64_t B = dst.sizes[0], M = dst.sizes[1], N = dst.sizes[2], K = a.sizes[2];
  if (B == 0 || M == 0 || N == 0) return;
  cudaStream_t stream = current_stream();
  if (K == 0) {
    EMBER_CUDA_CHECK(cudaMemsetAsync(dst.data, 0, sizeof(T) * B * M * N, stream), "matmul");
    return;
  }
  EMBER_CHECK_KIND(Value, fits_int(M) && fits_int(N) && fits_int(K) && fits_int(B),
                   "[matmul] cuda: matrix dims and batch must each be below 2^31, got (", B, ", ",
                   M, ", ", K, ") x (", K, ", ", N, ")");
  auto la = gemm_layout(M, K, a.strides[1], a.strides[2]);
  auto lb = gemm_layout(K, N, b.strides[1], b.strides[2]);
  std::optional<Scratch> buf_a, buf_b;
  std::array<int64_t, 3> sa{}, sb{};
  View va = a, vb = b;
  if (!la || !fits_int(la->ld)) {
    buf_a.emplace(sizeof(T) * B * M * K);
    va = pack(a, *buf_a, sa);
    la = GemmLayout{false, K};
  }
  if (!lb || !fits_int(lb->ld)) {
    buf_b.emplace(sizeof(T) * B * K * N);
    vb = pack(b, *buf_b, sb);
    lb = GemmLayout{false, N};
  }
  cublasHandle_t h = handle_for(current_device(), stream);
  gemm<T>(h, *la, *lb, M, N, K, static_cast<const T*>(va.data), va.strides[0],
          static_cast<const T*>(vb.data), vb.strides[0], static_cast<T*>(dst.data), B);
}

}  // namespace

void prepare_blas(int device, cudaStream_t stream) {
  cuda::DeviceGuard guard(device);
  handle_for(device, stream);
}

void launch_matmul(const View& dst, const View& a, const View& b) {
  visit_dtype(dst.dtype, [&]<class T>() {
    if constexpr (is_float_v<T>) {
      matmul_float<T>(dst, a, b);
    } else {
      int64_t B = dst.sizes[0], M = dst.sizes[1], N = dst.sizes[2], K = a.sizes[2];
      if (B * M * N == 0) return;
      EMBER_CUDA_LAUNCH(blocks_for(B * M * N), kThreads, 0, current_stream(), matmul_small<T>)
      (static_cast<T*>(dst.data), static_cast<const T*>(a.data), static_cast<const T*>(b.data), B,
       M, N, K, a.strides[0], a.strides[1], a.strides[2], b.strides[0], b.strides[1], b.strides[2]);
      EMBER_CUDA_CHECK_LAUNCH("matmul kernel (integer)");
    }
  });
}

}  // namespace ember::cuda_detail
