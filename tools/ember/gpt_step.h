// tools/ember/gpt_step.h: one training step of the GPT and its loss estimate, shared by
// `ember train --model gpt` and the test that replays the PyTorch reference's first steps.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/nn/parallel.h"
#include "ember/optim.h"
#include "gpt_data.h"
#include "gpt_model.h"

namespace ember::cli {

// Sets lr on every group, runs grad_accum micro-batches from sampler (each loss divided by
// grad_accum, gradients summed), clips the gradients' total norm to grad_clip, steps and clears
// them. Returns the step's loss (the micro-batch losses' mean). With ddp (wrapping model), the
// forwards run through it: the micro-batches but the last accumulate under no_sync, and the
// last backward averages the sums over the ranks.
double gpt_train_step(GptImpl& model, optim::Optimizer& opt, BatchSampler& sampler,
                      int64_t grad_accum, double grad_clip, double lr, Device device,
                      nn::parallel::DistributedDataParallelImpl* ddp = nullptr);

// The mean loss of eval_iters batches drawn from seed, in evaluation mode without gradients.
double gpt_estimate_loss(GptImpl& model, TokenSpan tokens, int64_t batch_size, int64_t eval_iters,
                         uint64_t seed, Device device);

}  // namespace ember::cli
