// examples/mps_device.cpp: the tutorial's "Apple Silicon (MPS) Support". ember has no Metal
// backend, so mps::is_available() is false and the pattern falls back to the CPU.
//   device = torch.device("mps" if torch.backends.mps.is_available() else "cpu")
#include <ember/ember.h>

#include <iostream>

int main() {
  ember::Device device(ember::mps::is_available() ? "mps" : "cpu");
  std::cout << std::boolalpha << "mps available: " << ember::mps::is_available() << "\n";
  std::cout << "using: " << device << "\n";
  std::cout << ember::ones({2}).to(device) << "\n";
}
