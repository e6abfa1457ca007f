// kernels/gemm_layout.h: how a BLAS (cuBLAS on CUDA) reads a strided
// row-major matrix without a copy -- as it is with a leading dimension, or as a transpose.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

namespace ember {

struct GemmLayout {
  bool transposed;  // read through its unit row stride (BLAS "T"), else its unit column stride
  int64_t ld;       // leading dimension
};

// How a (rows, cols) matrix with element strides (rs, cs) can be handed to BLAS, if it can.
inline std::optional<GemmLayout> gemm_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (cols == 1 || cs == 1) {
    int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1)) return GemmLayout{false, ld};
  }
  if (rows == 1 || rs == 1) {
    int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1)) return GemmLayout{true, ld};
  }
  return std::nullopt;
}

}  // namespace ember
