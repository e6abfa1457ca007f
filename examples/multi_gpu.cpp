// examples/multi_gpu.cpp: the tutorial's "Multi-GPU Setup" -- target a GPU by index, falling back
// cleanly when there are fewer GPUs than asked for.
//   device = torch.device("cuda:0"); device = torch.device("cuda:1")
#include <ember/ember.h>

#include <iostream>

int main() {
  int count = ember::cuda::device_count();
  std::cout << "GPUs: " << count << "\n";
  for (int index : {0, 1}) {
    ember::Device wanted(ember::kCUDA, index);
    ember::Device device = index < count ? wanted : ember::Device("cpu");
    ember::Tensor t = ember::arange(3, {.dtype = ember::kFloat32}).to(device);
    std::cout << "wanted " << wanted << ", using " << t.device()
              << (index < count ? "" : " (not present, fell back)") << "\n";
  }
}
