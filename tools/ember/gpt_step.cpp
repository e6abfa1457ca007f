// tools/ember/gpt_step.cpp: the GPT's training step and loss estimate.
#include "gpt_step.h"

#include "ember/autograd.h"
#include "ember/nn/utils.h"

namespace ember::cli {

double gpt_train_step(GptImpl& model, optim::Optimizer& opt, BatchSampler& sampler,
                      int64_t grad_accum, double grad_clip, double lr, Device device,
                      nn::parallel::DistributedDataParallelImpl* ddp) {
  for (size_t group = 0; group < opt.num_param_groups(); ++group) opt.set_lr(group, lr);
  double total = 0;
  Tensor x, y;
  for (int64_t micro = 0; micro < grad_accum; ++micro) {
    sampler.next(x, y);
    Tensor logits;
    if (!ddp) {
      logits = model.forward(x.to(device));
    } else if (micro + 1 < grad_accum) {
      auto local = ddp->no_sync();
      logits = ddp->forward(x.to(device));
    } else {
      logits = ddp->forward(x.to(device));
    }
    Tensor loss = GptImpl::loss(logits, y.to(device)) / static_cast<double>(grad_accum);
    loss.backward();
    total += loss.item<double>();
  }
  nn::utils::clip_grad_norm_(model.parameters(), grad_clip);
  opt.step();
  opt.zero_grad();
  return total;
}

double gpt_estimate_loss(GptImpl& model, TokenSpan tokens, int64_t batch_size, int64_t eval_iters,
                         uint64_t seed, Device device) {
  NoGradGuard no_grad;
  model.eval();
  BatchSampler sampler(tokens, batch_size, model.config.block_size, seed);
  double sum = 0;
  Tensor x, y;
  for (int64_t i = 0; i < eval_iters; ++i) {
    sampler.next(x, y);
    sum += GptImpl::loss(model.forward(x.to(device)), y.to(device)).item<double>();
  }
  model.train();
  return sum / static_cast<double>(eval_iters);
}

}  // namespace ember::cli
