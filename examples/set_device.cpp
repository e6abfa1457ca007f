// examples/set_device.cpp: the tutorial's "Setting the Device" -- pick a device once, use it
// everywhere; the same program runs on CPU-only and GPU machines.
//   device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
#include <ember/ember.h>

#include <iostream>

int main() {
  ember::Device device(ember::cuda::is_available() ? "cuda" : "cpu");
  std::cout << device << "\n";  // either "cuda" or "cpu"

  // The same choice in one call, with the index resolved.
  std::cout << ember::best_device() << "\n";  // "cuda:0" or "cpu"
}
