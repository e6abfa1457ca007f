// bench/checkpoint_load.cpp: how long loading a checkpoint takes and how much it raises the peak
// resident memory -- ember_checkpoint_load FILE|DIR prints one line: the seconds to load, the
// bytes of the tensors kept, the file size and the peak RSS before and after (getrusage), for a
// torch.save file (.pt/.bin), a .safetensors file or a Hugging Face folder.
// bench/checkpoint_load.sh runs it beside torch.load on the same files.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ember/ember.h"
#include "ember/io/hf_weights.h"
#include "ember/io/pt.h"
#include "ember/io/safetensors.h"

namespace {

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

size_t kept_bytes(const ember::io::NamedTensors& tensors) {
  size_t n = 0;
  for (const auto& [name, t] : tensors) n += static_cast<size_t>(t.numel()) * t.element_size();
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s FILE.pt|FILE.bin|FILE.safetensors|HF_DIR [SAVE_TO.pt]\n",
                 argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  const std::string path = argv[1];
  const long before = peak_rss_kib();
  const auto start = std::chrono::steady_clock::now();
  ember::io::NamedTensors tensors;
  if (fs::is_directory(path))
    tensors = ember::io::load_hf_weights(path).tensors;
  else if (path.ends_with(".safetensors"))
    tensors = ember::io::load_safetensors(path).tensors;
  else
    tensors = ember::io::load_pt(path).to_named_tensors();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uintmax_t file = fs::is_directory(path) ? 0 : fs::file_size(path);
  std::printf(
      "load_s=%.3f kept_MiB=%.1f file_MiB=%.1f peak_rss_before_MiB=%.1f "
      "peak_rss_after_MiB=%.1f\n",
      seconds, kept_bytes(tensors) / 1048576.0, file / 1048576.0, before / 1024.0,
      peak_rss_kib() / 1024.0);
  if (argc == 3) {  // then save_pt of what was loaded: time and the peak's rise over the load's
    const long loaded = peak_rss_kib();
    const auto t0 = std::chrono::steady_clock::now();
    ember::io::save_pt(argv[2], ember::io::PtValue::state_dict(tensors));
    std::printf("save_s=%.3f save_peak_rss_rise_MiB=%.1f\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                (peak_rss_kib() - loaded) / 1024.0);
  }
  return 0;
}
