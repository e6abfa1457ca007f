// examples/move_tensors.cpp: the tutorial's "Moving Tensors to GPU".
//   t = torch.tensor([1.0, 2.0, 3.0]); t_gpu = t.to(device)
#include <ember/ember.h>

#include <iostream>

int main() {
  ember::Device device = ember::best_device();

  ember::Tensor t = ember::tensor({1.0, 2.0, 3.0});
  std::cout << t.device() << "\n";  // cpu

  ember::Tensor t_gpu = t.to(device);
  std::cout << t_gpu.device() << "\n";  // cuda:0 (if a GPU is available)
  std::cout << t_gpu << "\n";
}
