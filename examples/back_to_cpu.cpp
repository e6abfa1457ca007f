// examples/back_to_cpu.cpp: the tutorial's "Moving Tensors Back to CPU" -- host memory (the C++
// counterpart of .numpy()) needs a CPU tensor.
//   t_cpu = t_gpu.cpu(); arr = t_cpu.detach().numpy()
#include <ember/ember.h>

#include <iostream>

int main() {
  ember::Tensor t_gpu = ember::tensor({1.0, 2.0, 3.0}).to(ember::best_device());

  if (t_gpu.is_cuda()) {
    try {
      t_gpu.to_vector<float>();  // fails, like t_gpu.numpy()
    } catch (const ember::Error& e) {
      std::cout << "Error: " << e.what() << "\n";
    }
  }

  ember::Tensor t_cpu = t_gpu.cpu();
  std::vector<float> arr = t_cpu.to_vector<float>();
  std::cout << "[";
  for (size_t i = 0; i < arr.size(); ++i) std::cout << (i ? " " : "") << arr[i] << ".";
  std::cout << "]\n";  // [1. 2. 3.]

  const float* raw = t_cpu.data_ptr<float>();  // zero-copy view of host memory
  std::cout << "first element via data_ptr: " << raw[0] << "\n";
}
