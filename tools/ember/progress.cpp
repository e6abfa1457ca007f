// tools/ember/progress.cpp: drawing the progress bar.
#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace ember::cli {

std::string format_duration(double seconds) {
  int s = static_cast<int>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%02d:%02d", s / 60, s % 60);
  return buf;
}

Progress::Progress(std::string label, int64_t total, bool shown)
    : label_(std::move(label)),
      total_(total),
      tty_(::isatty(2) == 1),
      shown_(shown),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::update(int64_t samples, double loss) {
  ++done_;
  samples_ += samples;
  loss_sum_ += loss;
  auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (now - last_draw_ > std::chrono::milliseconds(100) || done_ == total_) {
      last_draw_ = now;
      draw(false);
    }
  } else {
    int decile = static_cast<int>(10 * done_ / std::max<int64_t>(total_, 1));
    if (decile != last_decile_ && decile % 2 == 0 && done_ != total_) {
      last_decile_ = decile;
      draw(false);
    }
  }
}

void Progress::finish() {
  draw(true);
}

void Progress::draw(bool final) {
  if (!shown_) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = elapsed > 0 ? static_cast<double>(samples_) / elapsed : 0;
  double remaining =
      done_ > 0 ? elapsed * static_cast<double>(total_ - done_) / static_cast<double>(done_) : 0;
  double loss = done_ > 0 ? loss_sum_ / static_cast<double>(done_) : 0;
  int pct = static_cast<int>(100 * done_ / std::max<int64_t>(total_, 1));
  if (tty_) {
    constexpr int kWidth = 25;
    int filled = static_cast<int>(kWidth * done_ / std::max<int64_t>(total_, 1));
    std::string bar;
    for (int i = 0; i < kWidth; ++i) bar += i < filled ? "\u2588" : " ";
    std::fprintf(stderr, "\r%s %3d%%|%s| %lld/%lld [%s<%s, %.0f samples/s, loss %.4f]\033[K",
                 label_.c_str(), pct, bar.c_str(), static_cast<long long>(done_),
                 static_cast<long long>(total_), format_duration(elapsed).c_str(),
                 format_duration(remaining).c_str(), rate, loss);
    if (final) std::fputc('\n', stderr);
  } else {
    std::fprintf(stderr, "%s %3d%% %lld/%lld [%s<%s, %.0f samples/s, loss %.4f]\n", label_.c_str(),
                 pct, static_cast<long long>(done_), static_cast<long long>(total_),
                 format_duration(elapsed).c_str(), format_duration(remaining).c_str(), rate, loss);
  }
  std::fflush(stderr);
}

}  // namespace ember::cli
