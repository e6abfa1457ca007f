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

// cuda_attention_half.cu: the tensor-core attention kernels that launch_attention_forward and
// launch_attention_backward hand bfloat16 and float16 views to (lse in float32), and whether they
// take heads of these dims on `device` (the CUDA backend's takes_half_attention).
void launch_attention_forward_half(const View& out, const View& lse, const View& q, const View& k,
                                   const View& v, const View& mask, const AttentionParams& p);
void launch_attention_backward_half(const View& dq, const View& dk, const View& dv,
                                    const View& dout, const View& q, const View& k, const View& v,
                                    const View& out, const View& lse, const View& mask,
                                    const AttentionParams& p);
bool half_attention_fits(int64_t head_dim, int64_t value_dim, int device);

}  // namespace ember::cuda_detail
