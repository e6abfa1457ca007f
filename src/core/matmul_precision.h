// core/matmul_precision.h: the process-wide float32 matmul precision of
// set_float32_matmul_precision, as the CUDA backend reads it when it calls cuBLAS.
#pragma once

namespace ember {

enum class MatmulPrecision { Highest, High, Medium };

// The current setting (Highest unless changed).
MatmulPrecision float32_matmul_precision();

}  // namespace ember
