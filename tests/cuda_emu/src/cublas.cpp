// tests/cuda_emu/src/cublas.cpp: cuBLAS on the emulated device -- handles bound to the device
// current at cublasCreate, their stream and workspace, and the strided batched GEMMs, whose
// arguments are checked as cuBLAS documents them (non-negative sizes, leading dimensions at least
// the rows of each stored matrix, every batch of A, B and C inside one live allocation of the
// handle's device, batches of C that do not overlap) before C = alpha op(A) op(B) + beta C is
// computed on the CPU in stream order. 16-bit inputs and TF32 are rounded as the tensor cores
// take them; products accumulate in double and round once; beta == 0 never reads C.
#include <cublas_v2.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/half.h"
#include "emu_internal.h"

struct cublasContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

namespace {

using namespace ember_cuda_emu;

thread_local std::string tls_message;

cublasStatus_t fail(cublasStatus_t status, const std::string& message) {
  tls_message = "[emulated cuBLAS] " + message;
  return status;
}

cublasStatus_t check_handle(cublasHandle_t h, const char* call) {
  if (!h) return fail(CUBLAS_STATUS_NOT_INITIALIZED, std::string(call) + ": null handle");
  if (h->device != current_device())
    return fail(CUBLAS_STATUS_EXECUTION_FAILED,
                std::string(call) +
                    ": the handle was created on cuda:" + std::to_string(h->device) +
                    " but cuda:" + std::to_string(current_device()) + " is current");
  if (stream_device(h->stream) != h->device)
    return fail(CUBLAS_STATUS_EXECUTION_FAILED,
                std::string(call) + ": the handle's stream is not a live stream of its device");
  return CUBLAS_STATUS_SUCCESS;
}

// The TF32 value of x: 10 mantissa bits, rounded to nearest even.
float to_tf32(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  u += 0xfffu + ((u >> 13) & 1u);
  return std::bit_cast<float>(u & ~0x1fffu);
}

enum class Elem { F16, BF16, F32, F64 };

size_t elem_bytes(Elem e) {
  return e == Elem::F64 ? 8 : e == Elem::F32 ? 4 : 2;
}

double load(const void* p, int64_t i, Elem e, bool tf32) {
  switch (e) {
    case Elem::F16:
      return static_cast<float>(static_cast<const ember::Half*>(p)[i]);
    case Elem::BF16:
      return static_cast<float>(static_cast<const ember::BFloat16*>(p)[i]);
    case Elem::F32: {
      float v = static_cast<const float*>(p)[i];
      return tf32 ? to_tf32(v) : v;
    }
    case Elem::F64:
      return static_cast<const double*>(p)[i];
  }
  return 0;
}

void store(void* p, int64_t i, Elem e, double v) {
  switch (e) {
    case Elem::F16:
      static_cast<ember::Half*>(p)[i] = ember::Half(static_cast<float>(v));
      return;
    case Elem::BF16:
      static_cast<ember::BFloat16*>(p)[i] = ember::BFloat16(static_cast<float>(v));
      return;
    case Elem::F32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      return;
    case Elem::F64:
      static_cast<double*>(p)[i] = v;
      return;
  }
}

// [p, p + the batches of a rows x cols matrix with leading dimension ld) in device memory.
bool matrix_in_memory(const void* p, int rows, int cols, int ld, long long stride, int batch,
                      Elem e, int device, const char* call, const char* name, std::string& why) {
  if (rows == 0 || cols == 0 || batch == 0) return true;
  int64_t last = int64_t{cols - 1} * ld + rows - 1 + int64_t{batch - 1} * stride;
  Allocation a{};
  if (stride < 0 || !find_allocation(p, static_cast<size_t>(last + 1) * elem_bytes(e), &a) ||
      a.device != device) {
    why = std::string(call) + ": " + name + " (" + std::to_string(rows) + " x " +
          std::to_string(cols) + ", ld " + std::to_string(ld) + ", " + std::to_string(batch) +
          " batches of stride " + std::to_string(stride) +
          ") does not lie inside one live allocation of cuda:" + std::to_string(device);
    return false;
  }
  return true;
}

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, double alpha, const void* a, int lda, long long sa, const void* b,
                    int ldb, long long sb, double beta, void* c, int ldc, long long sc, int batch,
                    Elem in, Elem out, bool tf32, const char* call) {
  if (cublasStatus_t s = check_handle(h, call); s != CUBLAS_STATUS_SUCCESS) return s;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || (ta != CUBLAS_OP_N && ta != CUBLAS_OP_T) ||
      (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T))
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": negative size or bad op");
  const int a_rows = ta == CUBLAS_OP_N ? m : k, a_cols = ta == CUBLAS_OP_N ? k : m;
  const int b_rows = tb == CUBLAS_OP_N ? k : n, b_cols = tb == CUBLAS_OP_N ? n : k;
  if (lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) || ldc < std::max(1, m))
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string(call) + ": leading dimensions lda " + std::to_string(lda) + ", ldb " +
                    std::to_string(ldb) + ", ldc " + std::to_string(ldc) +
                    " below the stored rows " + std::to_string(a_rows) + ", " +
                    std::to_string(b_rows) + ", " + std::to_string(m));
  if (batch > 1 && n > 0 && m > 0 && sc < int64_t{ldc} * (n - 1) + m)
    return fail(
        CUBLAS_STATUS_INVALID_VALUE,
        std::string(call) + ": the batches of C overlap (stride " + std::to_string(sc) + ")");
  std::string why;
  if (k > 0 &&
      (!matrix_in_memory(a, a_rows, a_cols, lda, sa, batch, in, h->device, call, "A", why) ||
       !matrix_in_memory(b, b_rows, b_cols, ldb, sb, batch, in, h->device, call, "B", why)))
    return fail(CUBLAS_STATUS_INVALID_VALUE, why);
  if (!matrix_in_memory(c, m, n, ldc, sc, batch, out, h->device, call, "C", why))
    return fail(CUBLAS_STATUS_INVALID_VALUE, why);
  cudaError_t err = submit_work(h->stream, call, [=] {
    // op(A) as m rows of k and op(B) as n columns of k, widened, then a dot product per element.
    std::vector<double> ra(static_cast<size_t>(m) * k), cb(static_cast<size_t>(n) * k);
    for (int64_t bi = 0; bi < batch; ++bi) {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p)
          ra[i * k + p] =
              load(a, bi * sa + (ta == CUBLAS_OP_N ? p * lda + i : i * lda + p), in, tf32);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p)
          cb[j * k + p] =
              load(b, bi * sb + (tb == CUBLAS_OP_N ? j * ldb + p : p * ldb + j), in, tf32);
#pragma omp parallel for if (int64_t{m} * n * k > (1 << 22))
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          const double* x = &ra[i * k];
          const double* y = &cb[j * k];
          double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
          int64_t p = 0;
          for (; p + 4 <= k; p += 4) {
            s0 += x[p] * y[p];
            s1 += x[p + 1] * y[p + 1];
            s2 += x[p + 2] * y[p + 2];
            s3 += x[p + 3] * y[p + 3];
          }
          for (; p < k; ++p) s0 += x[p] * y[p];
          const int64_t ci = bi * sc + j * ldc + i;
          double v = alpha * ((s0 + s1) + (s2 + s3));
          if (beta != 0) v += beta * load(c, ci, out, false);
          store(c, ci, out, v);
        }
    }
  });
  if (err != cudaSuccess)
    return fail(CUBLAS_STATUS_EXECUTION_FAILED, std::string(call) + ": stream");
  return CUBLAS_STATUS_SUCCESS;
}

bool elem_of(cudaDataType t, Elem* e) {
  switch (t) {
    case CUDA_R_16F:
      *e = Elem::F16;
      return true;
    case CUDA_R_16BF:
      *e = Elem::BF16;
      return true;
    case CUDA_R_32F:
      *e = Elem::F32;
      return true;
    case CUDA_R_64F:
      *e = Elem::F64;
      return true;
  }
  return false;
}

}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  *handle = new cublasContext();
  (*handle)->device = current_device();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasSetStream: null handle");
  if (stream_device(stream) != handle->device)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasSetStream: the stream is not a live stream of the handle's cuda:" +
                    std::to_string(handle->device));
  handle->stream = stream;
  handle->workspace = nullptr;  // as cuBLAS: setting the stream resets the workspace
  handle->workspace_bytes = 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void* workspace, size_t nbytes) {
  if (!handle) return fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasSetWorkspace: null handle");
  Allocation a{};
  if (nbytes && (!find_allocation(workspace, nbytes, &a) || a.device != handle->device))
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasSetWorkspace: the workspace is not device memory of the handle's device");
  handle->workspace = workspace;
  handle->workspace_bytes = nbytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasSetMathMode: null handle");
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "success" : tls_message.c_str();
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float* alpha, const float* a, int lda, long long sa,
                                         const float* b, int ldb, long long sb, const float* beta,
                                         float* c, int ldc, long long sc, int batch) {
  bool tf32 = h && h->math == CUBLAS_TF32_TENSOR_OP_MATH;
  return gemm(h, ta, tb, m, n, k, *alpha, a, lda, sa, b, ldb, sb, *beta, c, ldc, sc, batch,
              Elem::F32, Elem::F32, tf32, "cublasSgemmStridedBatched");
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const double* alpha, const double* a, int lda,
                                         long long sa, const double* b, int ldb, long long sb,
                                         const double* beta, double* c, int ldc, long long sc,
                                         int batch) {
  return gemm(h, ta, tb, m, n, k, *alpha, a, lda, sa, b, ldb, sb, *beta, c, ldc, sc, batch,
              Elem::F64, Elem::F64, false, "cublasDgemmStridedBatched");
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void* alpha, const void* a, cudaDataType a_type,
                                          int lda, long long sa, const void* b, cudaDataType b_type,
                                          int ldb, long long sb, const void* beta, void* c,
                                          cudaDataType c_type, int ldc, long long sc, int batch,
                                          cublasComputeType_t compute, cublasGemmAlgo_t) {
  const char* call = "cublasGemmStridedBatchedEx";
  Elem ea{}, eb{}, ec{};
  if (!elem_of(a_type, &ea) || !elem_of(b_type, &eb) || !elem_of(c_type, &ec) || ea != eb ||
      ea != ec || ea == Elem::F64)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, std::string(call) + ": data types not supported");
  if (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_FAST_TF32)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, std::string(call) + ": compute type not supported");
  if (compute == CUBLAS_COMPUTE_32F_FAST_TF32 && ea != Elem::F32)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, std::string(call) + ": TF32 takes float32 data");
  // CUBLAS_COMPUTE_32F*: alpha and beta are floats.
  double al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  return gemm(h, ta, tb, m, n, k, al, a, lda, sa, b, ldb, sb, be, c, ldc, sc, batch, ea, ec,
              compute == CUBLAS_COMPUTE_32F_FAST_TF32, call);
}
