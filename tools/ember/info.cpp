// tools/ember/info.cpp: `ember info` -- the tutorial's availability checks as a report.
#include <iostream>

#include "commands.h"
#include "ember/ember.h"

namespace ember::cli {

int run_info() {
  std::cout << std::boolalpha;
  std::cout << "ember " << EMBER_VERSION << "\n";
  std::cout << "cuda available:  " << cuda::is_available() << "\n";
  std::cout << "cuda devices:    " << cuda::device_count() << "\n";
  for (int i = 0; i < cuda::device_count(); ++i)
    std::cout << "  cuda:" << i << "          " << cuda::get_device_name(i) << "\n";
  std::cout << "mps available:   " << mps::is_available() << "\n";
  std::cout << "auto device:     " << best_device() << "\n";
  std::cout << "cuda build:      " << (cuda::is_built() ? "yes" : "built without CUDA") << "\n";
  std::cout << "cpu isa:         " << get_cpu_capability()
            << " (ember's own GEMM and vector kernels; cap with "
               "EMBER_CPU_ISA=amx|avx512_bf16|avx512|avx2|baseline)\n";
  std::cout << "cpu threads:     " << get_num_threads() << "\n";
  std::cout << "distributed:     gloo "
            << (distributed::is_gloo_available() ? "yes" : "no (built without libgloo-dev)")
            << ", nccl "
            << (distributed::is_nccl_available() ? "yes" : "no (needs a CUDA build with NCCL)")
            << "\n";
  return 0;
}

}  // namespace ember::cli
