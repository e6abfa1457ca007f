// examples/check_gpu.cpp: the tutorial's "Checking GPU Availability".
//   print(torch.cuda.is_available()); print(torch.cuda.device_count());
//   print(torch.cuda.get_device_name(0))
#include <ember/ember.h>

#include <iostream>

int main() {
  std::cout << std::boolalpha;
  std::cout << "cuda available: " << ember::cuda::is_available() << "\n";  // true if a GPU is ready
  std::cout << "device count:   " << ember::cuda::device_count() << "\n";  // number of GPUs
  if (ember::cuda::is_available())
    std::cout << "device 0:       " << ember::cuda::get_device_name(0) << "\n";
  else
    std::cout << "device 0:       none (ember will run on the CPU)\n";
}
