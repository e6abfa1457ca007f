// tools/ember/progress.h: a tqdm-like progress bar on stderr -- bar, count, elapsed, remaining,
// samples/s and the running loss -- or plain lines when stderr is not a terminal.
#pragma once

#include <chrono>
#include <string>

namespace ember::cli {

class Progress {
 public:
  // shown false: counts but draws nothing (the other ranks of a data-parallel run).
  Progress(std::string label, int64_t total_batches, bool shown = true);
  // After each batch: samples in it and its loss.
  void update(int64_t samples, double loss);
  void finish();

 private:
  void draw(bool final);

  std::string label_;
  int64_t total_, done_ = 0, samples_ = 0;
  double loss_sum_ = 0;
  bool tty_;
  bool shown_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

std::string format_duration(double seconds);

}  // namespace ember::cli
