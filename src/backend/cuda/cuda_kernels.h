// backend/cuda/cuda_kernels.h: the kernel launchers of the CUDA backend, one family per .cu file.
// Each runs on the current device's current stream and checks its launches.
#pragma once

#include <cstdint>
#include <span>

#include "core/backend.h"

namespace ember::cuda_detail {

void launch_copy(const View& dst, const View& src);              // cuda_copy.cu
void launch_fill(const View& dst, const Scalar& value);          // cuda_copy.cu
void launch_unary(UnaryOp op, const View& dst, const View& src,  // cuda_unary.cu
                  const UnaryParams& p);
void launch_binary(BinaryOp op, const View& dst, const View& a, const View& b);  // cuda_binary.cu
void launch_where(const View& dst, const View& cond, const View& a, const View& b);
void launch_reduce(ReduceOp op, const View& dst, const View& src, uint64_t mask);  // cuda_reduce.cu
void launch_matmul(const View& dst, const View& a, const View& b);                 // cuda_matmul.cu
void launch_softmax(const View& dst, const View& src, int64_t dim, bool log);  // cuda_softmax.cu
void launch_im2col(const View& cols, const View& image, const Conv2dGeometry& g);  // cuda_conv.cu
void launch_col2im(const View& image, const View& cols, const Conv2dGeometry& g);
void launch_max_pool2d(const View& values, const View& indices, const View& image,
                       const Conv2dGeometry& g);
void launch_max_pool2d_backward(const View& grad_image, const View& grad_out, const View& indices,
                                const Conv2dGeometry& g);
void launch_index_select(const View& dst, const View& src, int64_t dim,  // cuda_index.cu
                         const View& index);
void launch_gather(const View& dst, const View& src, int64_t dim, const View& index);
void launch_scatter_add(const View& dst, int64_t dim, const View& index, const View& src);
void launch_random(RandomKind kind, const View& dst, uint64_t seed,
                   uint64_t counter,  // cuda_random.cu
                   double a, double b);
void launch_optimizer_step(const OptimizerStep& step,
                           std::span<const View> params,  // cuda_optim.cu
                           std::span<const View> grads, std::span<const View> state1,
                           std::span<const View> state2, std::span<const View> state3);

}  // namespace ember::cuda_detail
