// tools/ember/train.cpp: `ember train` (epochs of Adam/AdamW/SGD on Fashion-MNIST with progress,
// metrics, curves and a checkpoint per epoch; --resume continues where it stopped; data-parallel
// across the processes of a launched job, rank 0 writing the files) and `ember eval` (test
// accuracy and confusion matrix of a checkpoint).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "checkpoint.h"
#include "commands.h"
#include "distributed_run.h"
#include "ember/data.h"
#include "ember/ember.h"
#include "ember/fault_point.h"
#include "models.h"
#include "output.h"
#include "progress.h"
#include "report.h"

namespace ember::cli {

Device pick_device(const std::string& spec) {
  if (spec == "auto") return best_device();
  return resolve_device(Device(spec));
}

namespace {

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name, nn::Module& model,
                                                 double lr) {
  if (name == "adam")
    return std::make_unique<optim::Adam>(model.parameters(), optim::AdamOptions{.lr = lr});
  if (name == "adamw")
    return std::make_unique<optim::AdamW>(model.parameters(), optim::AdamWOptions{.lr = lr});
  return std::make_unique<optim::SGD>(model.parameters(),
                                      optim::SGDOptions{.lr = lr, .momentum = 0.9});
}

struct TestResult {
  double loss = 0, accuracy = 0;
  std::vector<int64_t> confusion;  // 10 x 10, row = true class
};

// The indices begin..end-1 in order: one rank's contiguous share of the test set.
class RangeSampler : public data::Sampler {
 public:
  RangeSampler(size_t begin, size_t end) : begin_(begin), end_(end) {}
  std::vector<int64_t> indices() const override {
    std::vector<int64_t> out;
    for (size_t i = begin_; i < end_; ++i) out.push_back(static_cast<int64_t>(i));
    return out;
  }
  size_t size() const override { return end_ - begin_; }

 private:
  size_t begin_, end_;
};

// Test loss and accuracy; in a data-parallel run each rank evaluates its share of the test set
// and the sums are added over the ranks.
TestResult evaluate(nn::Module& model, const std::shared_ptr<const data::Dataset>& test,
                    Device device, int64_t batch_size, bool confusion, const RankInfo& job = {}) {
  NoGradGuard no_grad;
  model.eval();
  const size_t n = test->size(), world = static_cast<size_t>(job.world),
               rank = static_cast<size_t>(job.rank);
  data::DataLoader loader(
      test, {.batch_size = batch_size,
             .device = device,
             .sampler = job.distributed ? std::make_shared<RangeSampler>(n * rank / world,
                                                                         n * (rank + 1) / world)
                                        : nullptr});
  TestResult r;
  if (confusion) r.confusion.assign(100, 0);
  double loss_sum = 0;
  int64_t correct = 0, seen = 0;
  for (const data::Example& batch : loader) {
    Tensor logits = model.forward(batch.data);
    loss_sum +=
        nn::F::cross_entropy(logits, batch.target, {.reduction = nn::F::kSum}).item<double>();
    Tensor pred = logits.argmax(1);
    correct += (pred == batch.target).sum().item<int64_t>();
    seen += batch.target.numel();
    if (confusion) {
      auto p = pred.cpu().to_vector<int64_t>();
      auto t = batch.target.cpu().to_vector<int64_t>();
      for (size_t i = 0; i < p.size(); ++i) ++r.confusion[t[i] * 10 + p[i]];
    }
  }
  model.train();
  std::vector<double> sums =
      sum_over_ranks({loss_sum, static_cast<double>(correct), static_cast<double>(seen)}, job);
  r.loss = sums[2] > 0 ? sums[0] / sums[2] : 0;
  r.accuracy = sums[2] > 0 ? sums[1] / sums[2] : 0;
  return r;
}

// A diverged run stops with an error instead of reporting success and saving NaN weights; the
// checkpoint of the last finished epoch stays as it was.
void check_finite_loss(double loss, int epoch, int64_t batch, const TrainOptions& o,
                       const std::string& ckpt) {
  if (std::isfinite(loss)) return;
  EMBER_THROW(Value, "[train] the training loss became ", loss, " at epoch ", epoch, ", batch ",
              batch, ": training diverged (try a smaller --lr than ", o.lr,
              "); nothing of this epoch was saved",
              epoch > 1 ? ", and '" + ckpt + "' still holds epoch " + std::to_string(epoch - 1) +
                              " (--resume continues from it)"
                        : std::string());
}

// Flags that shape the run, kept in the checkpoint for --resume's checks.
io::Metadata run_metadata(const TrainOptions& o) {
  return {{"batch_size", std::to_string(o.batch_size)}};
}

std::string data_dir(const std::string& given) {
  return given.empty() ? data::kFashionMnistDir : given;
}

}  // namespace

int run_train(const TrainOptions& options) {
  if (options.model == "gpt") return run_train_gpt(options);
  TrainOptions o = options;
  if (o.batch_size == 0) o.batch_size = 64;
  set_flush_denormal(true);  // Adam's moments of idle weights decay into subnormals
  // Under `ember run` (or --nproc-per-node): one rank of a data-parallel job.
  const RankInfo job = join_job_if_launched();
  Device device = rank_device(o.device, job);
  EMBER_CHECK(o.batch_size % job.world == 0, "--batch-size ", o.batch_size,
              " is the global batch, split over the ", job.world,
              " processes; make it a multiple of their number");
  const int64_t local_batch = o.batch_size / job.world;
  std::string root = data_dir(o.data);
  auto train_set = std::make_shared<data::MNIST>(root, data::MNIST::Split::Train);
  auto test_set = std::make_shared<data::MNIST>(root, data::MNIST::Split::Test);
  if (job.is_main()) prepare_out_dir(o.out);
  const std::string ckpt = o.out + "/checkpoint.safetensors", csv = o.out + "/metrics.csv",
                    svg = o.out + "/curves.svg";

  manual_seed(o.seed);
  nn::Sequential model = make_model(o.model);
  model->to(device);
  std::unique_ptr<optim::Optimizer> opt = make_optimizer(o.optimizer, *model, o.lr);
  // --amp: the forward pass and the loss under autocast (parameters stay float32); float16 also
  // scales the loss so that small gradients survive, and skips steps with inf/NaN gradients.
  const std::optional<DType> amp_dtype = o.amp == "bf16"   ? std::optional(kBFloat16)
                                         : o.amp == "fp16" ? std::optional(kFloat16)
                                                           : std::nullopt;
  amp::GradScaler scaler({.enabled = amp_dtype == kFloat16});
  std::vector<EpochRow> rows;
  int start_epoch = 1;
  if (o.resume) {
    EMBER_CHECK_KIND(IO, std::filesystem::exists(ckpt), "--resume: no checkpoint at '", ckpt,
                     "'; train without --resume first");
    const CheckpointInfo saved = read_checkpoint_info(ckpt);
    EMBER_CHECK(saved.model != o.model || saved.optimizer == o.optimizer, "--resume: the run in '",
                ckpt, "' was trained with --optimizer ", saved.optimizer, ", not ", o.optimizer,
                "; pass --optimizer ", saved.optimizer, " (or give another --out)");
    check_resume_flag(saved, ckpt, "seed", "--seed", std::to_string(o.seed));
    check_resume_flag(saved, ckpt, "batch_size", "--batch-size", std::to_string(o.batch_size));
    CheckpointInfo info = load_checkpoint(ckpt, *model, opt.get(), o.model, &scaler);
    default_generator(Device(kCPU)).manual_seed(info.generator_seed);
    default_generator(Device(kCPU)).set_offset(info.generator_offset);
    if (job.is_main()) rows = read_metrics_csv(csv);
    while (!rows.empty() && rows.back().epoch > info.epoch) rows.pop_back();
    start_epoch = info.epoch + 1;
    if (job.is_main())
      std::cerr << "resuming " << o.model << " after epoch " << info.epoch << " from " << ckpt
                << "\n";
  }
  if (job.is_main())
    std::cerr << "training " << o.model << " on " << device
              << (job.distributed ? " (rank 0; " + std::to_string(job.world) +
                                        " processes, DistributedDataParallel)"
                                  : std::string())
              << ": " << train_set->size() << " training and " << test_set->size()
              << " test images, batch " << o.batch_size << ", " << o.optimizer << " lr " << o.lr
              << (amp_dtype ? std::string(", autocast ") + dtype_name(*amp_dtype) : "") << "\n";
  // Data-parallel: the module runs through DistributedDataParallel (gradients averaged over the
  // ranks in backward) and each rank reads its share of every epoch (DistributedSampler).
  std::shared_ptr<nn::Module> net = model.ptr();
  std::shared_ptr<data::DistributedSampler> sampler;
  if (job.distributed) {
    net = nn::parallel::DistributedDataParallel(model.ptr()).ptr();
    sampler = std::make_shared<data::DistributedSampler>(train_set->size(), job.world, job.rank,
                                                         true, o.seed);
  }

  double best = 0;
  for (const EpochRow& r : rows) best = std::max(best, r.test_accuracy);
  for (int epoch = start_epoch; epoch <= o.epochs; ++epoch) {
    // Each epoch's order depends only on (seed, epoch), so a resumed run sees the same batches.
    if (sampler) sampler->set_epoch(static_cast<uint64_t>(epoch));
    data::DataLoader loader(train_set, {.batch_size = local_batch,
                                        .shuffle = sampler == nullptr,
                                        .seed = o.seed * 1000003 + static_cast<uint64_t>(epoch),
                                        .num_workers = o.workers,
                                        .device = device,
                                        .sampler = sampler});
    Progress progress("epoch " + std::to_string(epoch) + "/" + std::to_string(o.epochs),
                      static_cast<int64_t>(loader.size()), job.is_main());
    auto t0 = std::chrono::steady_clock::now();
    double loss_sum = 0;
    int64_t samples = 0;
    for (const data::Example& batch : loader) {
      Tensor loss;
      {
        AutocastGuard ac(device.type(), amp_dtype, amp_dtype.has_value());
        loss = nn::F::cross_entropy(net->forward(batch.data), batch.target);
      }
      opt->zero_grad();
      scaler.scale(loss).backward();
      scaler.step(*opt);
      scaler.update();
      double l = loss.item<double>();
      check_finite_loss(l, epoch, samples / local_batch + 1, o, ckpt);
      int64_t n = batch.target.numel();
      loss_sum += l * static_cast<double>(n);
      samples += n;
      progress.update(n, l);
    }
    progress.finish();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::vector<double> train_sums =
        sum_over_ranks({loss_sum, static_cast<double>(samples)}, job);
    TestResult test = evaluate(*model, test_set, device, 1000, false, job);
    EpochRow row{epoch,     train_sums[0] / std::max(train_sums[1], 1.0),
                 test.loss, test.accuracy,
                 seconds,   train_sums[1] / seconds};
    rows.push_back(row);
    best = std::max(best, test.accuracy);
    if (!job.is_main()) continue;  // rank 0 reports and writes the files
    std::printf(
        "epoch %d: train loss %.4f, test loss %.4f, test accuracy %.2f%%, %.1f s, %.0f samples/s\n",
        epoch, row.train_loss, row.test_loss, 100 * row.test_accuracy, seconds,
        row.samples_per_second);
    flush_stdout_checked();
    // The checkpoint is the commit point: the metrics go first, so a crash between the two leaves
    // a row past the checkpoint, which --resume drops and writes again, never a row lost.
    write_metrics_csv(csv, rows);
    write_curves_svg(svg, rows, o.loss_axis);
    fault_point("train-after-metrics");
    Generator& gen = default_generator(Device(kCPU));
    save_checkpoint(
        ckpt, *model, opt.get(),
        {o.model, o.optimizer, epoch, o.seed, gen.seed(), gen.offset(), run_metadata(o), {}},
        &scaler);
  }
  leave_job(job);
  if (!job.is_main()) return 0;
  std::printf("best test accuracy: %.2f%%\n", 100 * best);
  std::printf("results in %s: metrics.csv, curves.svg, checkpoint.safetensors\n", o.out.c_str());
  return 0;
}

int run_eval(const EvalOptions& o) {
  Device device = pick_device(o.device);
  CheckpointInfo info = read_checkpoint_info(o.checkpoint);
  EMBER_CHECK(info.model != "gpt", "[eval] '", o.checkpoint,
              "' is a GPT checkpoint; `ember eval` tests the Fashion-MNIST models. Sample from it "
              "with `ember generate --checkpoint ",
              o.checkpoint, "`");
  nn::Sequential model = make_model(info.model);
  model->to(device);
  load_checkpoint(o.checkpoint, *model, nullptr, info.model);
  auto test_set = std::make_shared<data::MNIST>(data_dir(o.data), data::MNIST::Split::Test);
  TestResult r = evaluate(*model, test_set, device, o.batch_size, true);
  std::printf("%s after epoch %d on %s: test accuracy %.2f%%, test loss %.4f\n", info.model.c_str(),
              info.epoch, device.str().c_str(), 100 * r.accuracy, r.loss);
  std::printf("confusion matrix (rows: true class, columns: predicted)\n     ");
  for (int c = 0; c < 10; ++c) std::printf("%6d", c);
  std::printf("\n");
  for (int t = 0; t < 10; ++t) {
    std::printf("%4d ", t);
    for (int p = 0; p < 10; ++p)
      std::printf("%6lld", static_cast<long long>(r.confusion[t * 10 + p]));
    std::printf("\n");
  }
  flush_stdout_checked();
  return 0;
}

}  // namespace ember::cli
