// kernels/op_params.h: what backend ops take besides views -- reduction and random kinds, the
// SGD and Adam steps' options, the convolution window geometry and the fused attention's options.
#pragma once

#include <cstdint>

#include "ember/dtype.h"
#include "kernels/quant_blocks.h"

namespace ember {

enum class ReduceOp { Sum, Prod, Max, Min, ArgMax, ArgMin };
// Scans along a dim: cumsum, cumprod, cummax, cummin, logcumsumexp (kernels/scan_ops.h).
enum class ScanOp { Sum, Prod, Max, Min, LogSumExp };

enum class RandomKind { Uniform, Normal, RandInt };

// Philox counters a random fill of n elements consumes: four float32 or two float64 draws per
// counter, one counter per integer.
inline uint64_t random_counters(RandomKind kind, DType dtype, int64_t n) {
  uint64_t per = kind == RandomKind::RandInt ? 1 : dtype == kFloat32 ? 4 : 2;
  return (static_cast<uint64_t>(n) + per - 1) / per;
}

// One fused SGD update of many parameters (sgd_step), PyTorch's SGD options.
struct SgdStep {
  double lr = 0, weight_decay = 0;
  bool maximize = false;
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  bool first_step = false;  // the momentum buffers are new: they take the gradient as it is
};

// One fused Adam or AdamW update of many parameters at one step count (adam_step).
struct AdamStep {
  double lr = 0, weight_decay = 0;
  bool maximize = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, bias_correction1 = 1, bias_correction2 = 1;
  bool amsgrad = false, decoupled_weight_decay = false;
};

// Where the kh x kw windows of a 2-D convolution or pooling sit on one (H, W) image plane: the
// window at output (oy, ox) covers rows oy * stride_h - pad_h + ki * dilation_h (ki < kernel_h),
// and likewise columns. Positions outside the image read as 0.
struct Conv2dGeometry {
  int64_t batch = 1, channels = 1, height = 1, width = 1;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  int64_t out_h = 1, out_w = 1;
};

// The fused attention kernels' options (core/backend_ops.def, attention_forward/backward):
// scores are q k^T * scale; causal keeps key j for query i iff j <= i; kv_groups query heads
// share each key/value head (enable_gqa; 1 without). With dropout_p > 0 (CPU kernels only) the
// weight of element idx of the (N, Hq, L, S) weights is kept, and scaled by 1 / (1 - dropout_p),
// when the uniform draw idx of a random fill from (dropout_seed, dropout_counter) is >= dropout_p
// (kernels/philox.h): the mask dropout(weights, p) draws for a tensor of that shape.
struct AttentionParams {
  double scale;
  bool causal;
  int64_t kv_groups;
  double dropout_p = 0;
  uint64_t dropout_seed = 0, dropout_counter = 0;
};

}  // namespace ember
