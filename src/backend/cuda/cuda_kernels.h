// backend/cuda/cuda_kernels.h: the kernel launchers of the CUDA backend, one family per .cu file.
// Each runs on the current device's current stream and checks its launches.
#pragma once

#include <cstdint>
#include <span>

#include "core/backend.h"

namespace ember::cuda_detail {

// launch_<op> for every op of core/backend_ops.def, with the op's parameters: launch_copy and
// launch_fill in cuda_copy.cu, launch_unary in cuda_unary.cu, launch_binary and launch_where in
// cuda_binary.cu, and so on by family (reduce, matmul, softmax, conv, index, random, optim).
#define EMBER_BACKEND_OP(name, params, args, on) void launch_##name params;
#include "core/backend_ops.def"
#undef EMBER_BACKEND_OP

}  // namespace ember::cuda_detail
