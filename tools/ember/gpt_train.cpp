// tools/ember/gpt_train.cpp: `ember train --model gpt` -- a character-level GPT on a text file
// with AdamW, warmup and cosine decay, gradient clipping and accumulation; every eval interval
// the train and validation losses go to metrics.csv and curves.svg and the state to the
// checkpoint, from which --resume continues. Data-parallel across the ranks of a launched job.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "checkpoint.h"
#include "commands.h"
#include "distributed_run.h"
#include "ember/ember.h"
#include "ember/fault_point.h"
#include "gpt_checkpoint.h"
#include "gpt_data.h"
#include "gpt_report.h"
#include "gpt_step.h"
#include "output.h"
#include "progress.h"

namespace ember::cli {

namespace {

void check_options(const TrainOptions& o) {
  const GptTrainOptions& g = o.gpt;
  EMBER_CHECK(g.layers > 0 && g.heads > 0 && g.embd > 0 && g.block_size > 0,
              "--layers, --heads, --embd and --block-size must be positive");
  EMBER_CHECK(g.embd % g.heads == 0, "--embd ", g.embd, " must be a multiple of --heads ", g.heads);
  EMBER_CHECK(g.iters > 0 && g.eval_interval > 0 && g.eval_iters > 0 && g.grad_accum > 0,
              "--iters, --eval-interval, --eval-iters and --grad-accum must be positive");
  EMBER_CHECK(g.dropout >= 0 && g.dropout < 1, "--dropout must be in [0, 1), not ", g.dropout);
  EMBER_CHECK(o.amp == "none", "--amp is for the image models; the GPT trains in float32");
}

}  // namespace

int run_train_gpt(const TrainOptions& o) {
  check_options(o);
  set_flush_denormal(true);
  const GptTrainOptions& g = o.gpt;
  const int64_t batch = o.batch_size ? o.batch_size : 12;
  // Under `ember run` (or --nproc-per-node): one rank of a data-parallel job. The ranks split
  // each batch: together they draw the windows one process would, so the losses are the same.
  const RankInfo job = join_job_if_launched();
  Device device = rank_device(o.device, job);
  EMBER_CHECK(batch % job.world == 0, "--batch-size ", batch, " is the global batch, split over ",
              "the ", job.world, " processes; make it a multiple of their number");
  const int64_t local_batch = batch / job.world;
  const std::string path = o.data.empty() ? kDefaultGptText : o.data;
  if (job.is_main()) prepare_out_dir(o.out);
  GptSpec spec{{.block_size = g.block_size,
                .n_layer = g.layers,
                .n_head = g.heads,
                .n_embd = g.embd,
                .dropout = g.dropout},
               {}};
  TextSplits splits;
  {
    const TextFile file(path);  // mapped: only the one-byte tokens stay in memory
    spec.vocab = Vocabulary::of_text(file.text());
    splits = split_text(spec.vocab.encode_bytes(file.text(), "the text"), g.block_size);
  }
  spec.config.vocab_size = spec.vocab.size();
  const std::string ckpt = o.out + "/checkpoint.safetensors", csv = o.out + "/metrics.csv",
                    svg = o.out + "/curves.svg";

  CheckpointInfo info;
  if (o.resume) {
    EMBER_CHECK_KIND(IO, std::filesystem::exists(ckpt), "--resume: no checkpoint at '", ckpt,
                     "'; train without --resume first");
    info = read_checkpoint_info(ckpt);
    EMBER_CHECK(info.model == "gpt", "[checkpoint] '", ckpt, "' holds a model of kind '",
                info.model, "', not 'gpt'; use --model ", info.model, " or another --out");
    check_resume_flag(info, ckpt, "seed", "--seed", std::to_string(o.seed));
    check_resume_flag(info, ckpt, "train.batch_size", "--batch-size", std::to_string(batch));
    check_resume_flag(info, ckpt, "train.grad_accum", "--grad-accum", std::to_string(g.grad_accum));
    const GptSpec saved = gpt_spec_of(info.extra, ckpt);
    check_gpt_weights(saved, info.shapes, ckpt);
    EMBER_CHECK(saved.vocab.chars() == spec.vocab.chars() &&
                    saved.config.block_size == spec.config.block_size &&
                    saved.config.n_layer == spec.config.n_layer &&
                    saved.config.n_head == spec.config.n_head &&
                    saved.config.n_embd == spec.config.n_embd,
                "--resume: the checkpoint was trained on another text or with other --layers, "
                "--heads, --embd or --block-size; pass the same --data and sizes");
  }
  manual_seed(o.seed);
  Gpt model(spec.config);
  model->to(device);
  auto opt = make_gpt_optimizer(*model, o.lr, g.weight_decay, {0.9, 0.99});
  std::vector<GptEvalRow> rows;
  int64_t start = 0;
  if (o.resume) {
    load_checkpoint(ckpt, *model, opt.get(), "gpt");
    default_generator(Device(kCPU)).manual_seed(info.generator_seed);
    default_generator(Device(kCPU)).set_offset(info.generator_offset);
    start = info.epoch;
    if (job.is_main()) rows = read_gpt_metrics_csv(csv);
    while (!rows.empty() && rows.back().iter > start) rows.pop_back();
    if (job.is_main())
      std::cerr << "resuming gpt after iteration " << start << " from " << ckpt << "\n";
  }
  std::shared_ptr<nn::parallel::DistributedDataParallelImpl> ddp;
  if (job.distributed) ddp = nn::parallel::DistributedDataParallel(model.ptr()).ptr();
  int64_t params = 0;
  for (const Tensor& p : model->parameters()) params += p.numel();
  if (job.is_main())
    std::cerr << "training gpt on " << device
              << (job.distributed ? " (rank 0; " + std::to_string(job.world) +
                                        " processes, DistributedDataParallel)"
                                  : std::string())
              << ": " << params << " parameters, " << g.layers << " layers, " << g.heads
              << " heads, embedding " << g.embd << ", block " << g.block_size << ", vocabulary "
              << spec.vocab.size() << ", " << splits.train().size() << " train and "
              << splits.val().size() << " validation characters, batch " << batch << " x "
              << g.grad_accum << ", adamw lr " << o.lr << "\n";

  const double min_lr = o.lr / 10;
  const int64_t decay_iters = g.lr_decay_iters ? g.lr_decay_iters : g.iters;
  const int64_t tokens_per_step = batch * g.block_size * g.grad_accum;
  BatchSampler sampler(splits.train(), local_batch, g.block_size, stream_seed(o.seed, kTrainStream),
                       static_cast<uint64_t>(start * batch * g.grad_accum + job.rank * local_batch),
                       static_cast<uint64_t>((job.world - 1) * local_batch));
  // Rank 0 evaluates and writes; the others go on to the next step's all-reduce, which waits.
  auto evaluate_and_save = [&](int64_t done, double lr, double seconds) {
    if (!job.is_main()) return;
    GptEvalRow row{done,
                   gpt_estimate_loss(*model, splits.train(), batch, g.eval_iters,
                                     stream_seed(o.seed, kEvalTrainStream), device),
                   gpt_estimate_loss(*model, splits.val(), batch, g.eval_iters,
                                     stream_seed(o.seed, kEvalValStream), device),
                   lr,
                   seconds,
                   seconds > 0
                       ? static_cast<double>(tokens_per_step) *
                             static_cast<double>(done - (rows.empty() ? 0 : rows.back().iter)) /
                             seconds
                       : 0.0};
    rows.push_back(row);
    std::printf("iter %lld: train loss %.4f, val loss %.4f, lr %.3g, %.1f s, %.0f tokens/s\n",
                static_cast<long long>(done), row.train_loss, row.val_loss, lr, seconds,
                row.tokens_per_second);
    flush_stdout_checked();
    Generator& gen = default_generator(Device(kCPU));
    CheckpointInfo saved{"gpt",      "adamw",      static_cast<int>(done), o.seed,
                         gen.seed(), gen.offset(), gpt_metadata(spec),     {}};
    saved.extra["train.batch_size"] = std::to_string(batch);
    saved.extra["train.grad_accum"] = std::to_string(g.grad_accum);
    // The checkpoint is the commit point (see train.cpp): metrics first.
    write_gpt_metrics_csv(csv, rows);
    write_gpt_curves_svg(svg, rows, o.loss_axis);
    fault_point("train-after-metrics");
    save_checkpoint(ckpt, *model, opt.get(), saved);
  };
  // A resumed run has its evaluation of iteration 0 already (even when it resumes from it).
  if (!o.resume) evaluate_and_save(0, gpt_lr_at(0, o.lr, min_lr, g.warmup_iters, decay_iters), 0);

  while (start < g.iters) {
    const int64_t stop = std::min(g.iters, (start / g.eval_interval + 1) * g.eval_interval);
    Progress progress("iters " + std::to_string(start + 1) + "-" + std::to_string(stop),
                      stop - start, job.is_main());
    auto t0 = std::chrono::steady_clock::now();
    double lr = 0;
    for (int64_t it = start; it < stop; ++it) {
      lr = gpt_lr_at(it, o.lr, min_lr, g.warmup_iters, decay_iters);
      const double step_loss =
          gpt_train_step(*model, *opt, sampler, g.grad_accum, g.grad_clip, lr, device, ddp.get());
      EMBER_CHECK_KIND(Value, std::isfinite(step_loss), "[train] the training loss became ",
                       step_loss, " at iteration ", it + 1,
                       ": training diverged (try a smaller --lr than ", o.lr,
                       "); nothing after iteration ", start, " was saved, and '", ckpt,
                       "' holds iteration ", start, " (--resume continues from it)");
      progress.update(tokens_per_step, step_loss);
    }
    progress.finish();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    evaluate_and_save(stop, lr, seconds);
    start = stop;
  }
  leave_job(job);
  if (!job.is_main()) return 0;
  double best = rows.front().val_loss;
  for (const GptEvalRow& r : rows) best = std::min(best, r.val_loss);
  std::printf("best validation loss: %.4f\n", best);
  std::printf("results in %s: metrics.csv, curves.svg, checkpoint.safetensors\n", o.out.c_str());
  return 0;
}

}  // namespace ember::cli
